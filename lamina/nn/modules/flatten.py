"""`lamina.nn.modules.flatten` (torch.nn.modules.flatten): Flatten and Unflatten, under
PyTorch's module path."""

from lamina.nn import (
    Flatten,
    Unflatten,
)

__all__ = ["Flatten", "Unflatten"]
