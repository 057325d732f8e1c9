"""`lamina.nn.modules.fold` (torch.nn.modules.fold): Fold and Unfold, under PyTorch's module
path."""

from lamina.nn import (
    Fold,
    Unfold,
)

__all__ = ["Fold", "Unfold"]
