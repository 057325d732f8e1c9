"""Pooling layers (max and average, 1-D and 2-D)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer

IntOrPair = int | tuple[int, int]


class _Pool(Layer):
    op: Callable[..., Tensor]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding

    def forward(self, x: Tensor) -> Tensor:
        return type(self).op(x, self.kernel_size, self.stride, self.padding)

    def get_config(self) -> dict[str, Any]:
        return {"kernel_size": _plain(self.kernel_size), "stride": _plain(self.stride),
                "padding": _plain(self.padding)}


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


@register_layer("MaxPool1d")
class MaxPool1d(_Pool):
    """Max over windows of (N, C, L) input; stride defaults to kernel_size, padding is -inf."""

    op = staticmethod(F.max_pool1d)

    def __init__(self, kernel_size: int, stride: int | None = None, padding: int = 0) -> None:
        super().__init__(kernel_size, stride, padding)


@register_layer("MaxPool2d")
class MaxPool2d(_Pool):
    """Max over windows of (N, C, H, W) input; stride defaults to kernel_size, padding is -inf."""

    op = staticmethod(F.max_pool2d)

    def __init__(self, kernel_size: IntOrPair, stride: IntOrPair | None = None,
                 padding: IntOrPair = 0) -> None:
        super().__init__(kernel_size, stride, padding)


@register_layer("AvgPool1d")
class AvgPool1d(_Pool):
    """Mean over windows of (N, C, L) input; zero padding counts in the mean."""

    op = staticmethod(F.avg_pool1d)

    def __init__(self, kernel_size: int, stride: int | None = None, padding: int = 0) -> None:
        super().__init__(kernel_size, stride, padding)


@register_layer("AvgPool2d")
class AvgPool2d(_Pool):
    """Mean over windows of (N, C, H, W) input; zero padding counts in the mean."""

    op = staticmethod(F.avg_pool2d)

    def __init__(self, kernel_size: IntOrPair, stride: IntOrPair | None = None,
                 padding: IntOrPair = 0) -> None:
        super().__init__(kernel_size, stride, padding)
