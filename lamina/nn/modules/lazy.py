"""`lamina.nn.modules.lazy` (torch.nn.modules.lazy): the lazy-module mixin, under PyTorch's
module path."""

from lamina.nn.lazy import LazyModuleMixin

__all__ = ["LazyModuleMixin"]
