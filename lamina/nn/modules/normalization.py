"""`lamina.nn.modules.normalization` (torch.nn.modules.normalization): the layer, group and RMS
norms, under PyTorch's module path."""

from lamina.nn import (
    GroupNorm,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
)

__all__ = ["GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"]
