"""`lamina.nn.modules.pixelshuffle` (torch.nn.modules.pixelshuffle): the pixel shuffles, under
PyTorch's module path."""

from lamina.nn import (
    PixelShuffle,
    PixelUnshuffle,
)

__all__ = ["PixelShuffle", "PixelUnshuffle"]
