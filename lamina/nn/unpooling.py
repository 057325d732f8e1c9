"""Max unpooling layers (PyTorch's MaxUnpool1d/2d/3d): each value of a max pooling's
output back at the place its indices (`return_indices=True`) give, zeros elsewhere."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import config_value, register_layer


class _MaxUnpool(Layer):
    op: Callable[..., Tensor]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, input: Tensor, indices: Tensor, output_size: Any = None) -> Tensor:
        return type(self).op(input, indices, self.kernel_size, self.stride, self.padding,
                             output_size)

    def get_config(self) -> dict[str, Any]:
        return {"kernel_size": config_value(self.kernel_size),
                "stride": config_value(self.stride), "padding": config_value(self.padding)}

    def extra_repr(self) -> str:
        stride = self.kernel_size if self.stride is None else self.stride
        return f"kernel_size={self.kernel_size}, stride={stride}, padding={self.padding}"


@register_layer("MaxUnpool1d")
class MaxUnpool1d(_MaxUnpool):
    """(N, C, L) pooled values back at their places.

    Examples:
        >>> pool, unpool = nn.MaxPool1d(2, return_indices=True), nn.MaxUnpool1d(2)
        >>> unpool(*pool(lm.arange(6.0).reshape(1, 1, 6)))
        tensor([[[0., 1., 0., 3., 0., 5.]]])
    """

    op = staticmethod(F.max_unpool1d)


@register_layer("MaxUnpool2d")
class MaxUnpool2d(_MaxUnpool):
    """(N, C, H, W) pooled values back at their places; `output_size` picks among the
    input sizes a pooling maps to one output size.

    Examples:
        >>> pool, unpool = nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2)
        >>> y, i = pool(lm.zeros(1, 3, 5, 5))
        >>> unpool(y, i, output_size=(5, 5)).shape
        lamina.Size([1, 3, 5, 5])
    """

    op = staticmethod(F.max_unpool2d)


@register_layer("MaxUnpool3d")
class MaxUnpool3d(_MaxUnpool):
    """(N, C, D, H, W) pooled values back at their places."""

    op = staticmethod(F.max_unpool3d)
