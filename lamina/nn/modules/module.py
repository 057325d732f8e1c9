"""`lamina.nn.modules.module` (torch.nn.modules.module): Module (lamina's Layer), under
PyTorch's module path."""

from lamina.nn import (
    Module,
)

__all__ = ["Module"]
