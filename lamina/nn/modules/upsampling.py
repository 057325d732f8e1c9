"""`lamina.nn.modules.upsampling` (torch.nn.modules.upsampling): the upsamplings, under
PyTorch's module path."""

from lamina.nn import (
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ = ["Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"]
