"""`lamina.nn.modules.linear` (torch.nn.modules.linear): the linear maps, under PyTorch's
module path."""

from lamina.nn import (
    Bilinear,
    Identity,
    LazyLinear,
    Linear,
)

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear"]
