"""More pooling layers: the 3-D adaptive poolings, power-average (LP) pooling,
ChannelShuffle and fractional max pooling."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.pooling import _AdaptiveMax, _AdaptivePool
from lamina.nn.registry import config_value, register_layer


@register_layer("AdaptiveAvgPool3d")
class AdaptiveAvgPool3d(_AdaptivePool):
    """Mean over adaptive bins of (N, C, D, H, W) input to (N, C, *output_size); 1 is
    global average pooling; None keeps an axis.

    Examples:
        >>> nn.AdaptiveAvgPool3d(1)(lm.zeros(2, 3, 4, 4, 4)).shape
        lamina.Size([2, 3, 1, 1, 1])
    """

    op = staticmethod(F.adaptive_avg_pool3d)
    nd = 3

    def __init__(self, output_size: Any) -> None:
        super().__init__(output_size)


@register_layer("AdaptiveMaxPool3d")
class AdaptiveMaxPool3d(_AdaptiveMax):
    """Max over an `output_size` grid of bins of (N, C, D, H, W).

    Examples:
        >>> nn.AdaptiveMaxPool3d((1, 2, 2))(lm.zeros(1, 3, 4, 4, 4)).shape
        lamina.Size([1, 3, 1, 2, 2])
    """

    op = staticmethod(F.adaptive_max_pool3d)


class _LPPool(Layer):
    op: Callable[..., Tensor]

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, x: Tensor) -> Tensor:
        return type(self).op(x, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    def get_config(self) -> dict[str, Any]:
        return {"norm_type": self.norm_type, "kernel_size": config_value(self.kernel_size),
                "stride": config_value(self.stride), "ceil_mode": self.ceil_mode}

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


@register_layer("LPPool1d")
class LPPool1d(_LPPool):
    """Each window's p-norm over (N, C, L): (sum of x ** p) ** (1 / p).

    Examples:
        >>> nn.LPPool1d(2, 2)(lm.tensor([[[3.0, 4.0]]]))
        tensor([[[5.]]])
    """

    op = staticmethod(F.lp_pool1d)


@register_layer("LPPool2d")
class LPPool2d(_LPPool):
    """Each window's p-norm over (N, C, H, W).

    Examples:
        >>> nn.LPPool2d(1, 2)(lm.ones(1, 1, 4, 4)).shape
        lamina.Size([1, 1, 2, 2])
    """

    op = staticmethod(F.lp_pool2d)


@register_layer("LPPool3d")
class LPPool3d(_LPPool):
    """Each window's p-norm over (N, C, D, H, W).

    Examples:
        >>> nn.LPPool3d(2, 2)(lm.ones(1, 1, 2, 4, 4)).shape
        lamina.Size([1, 1, 1, 2, 2])
    """

    op = staticmethod(F.lp_pool3d)


@register_layer("ChannelShuffle")
class ChannelShuffle(Layer):
    """ShuffleNet's channel shuffle of (N, C, *) input over `groups` groups.

    Examples:
        >>> nn.ChannelShuffle(2)(lm.arange(4.0).reshape(1, 4, 1)).flatten().tolist()
        [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, x: Tensor) -> Tensor:
        return F.channel_shuffle(x, self.groups)

    def get_config(self) -> dict[str, Any]:
        return {"groups": self.groups}

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


__all__ = ["AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "ChannelShuffle", "LPPool1d", "LPPool2d",
           "LPPool3d"]


class _FractionalMaxPool(Layer):
    op: Callable[..., Any]

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Any = None) -> None:
        super().__init__()
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output "
                             "size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        ratios = (output_ratio if isinstance(output_ratio, (tuple, list)) else (output_ratio,))
        if output_ratio is not None and not all(0 < r < 1 for r in ratios):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
        self.kernel_size, self.output_size = kernel_size, output_size
        self.output_ratio, self.return_indices = output_ratio, return_indices
        self._random_samples = _random_samples

    def forward(self, x: Tensor) -> Any:
        return type(self).op(x, self.kernel_size, self.output_size, self.output_ratio,
                             self.return_indices, _random_samples=self._random_samples)

    def extra_repr(self) -> str:
        return ""  # PyTorch's prints nothing between the parentheses

    def get_config(self) -> dict[str, Any]:
        return {"kernel_size": config_value(self.kernel_size),
                "output_size": config_value(self.output_size),
                "output_ratio": config_value(self.output_ratio),
                "return_indices": self.return_indices}


@register_layer("FractionalMaxPool2d")
class FractionalMaxPool2d(_FractionalMaxPool):
    """Max pooling with windows at pseudo-random fractional steps (Graham's), to
    `output_size` or `output_ratio` of the input's (N, C, H, W) size.

    Examples:
        >>> nn.FractionalMaxPool2d(3, output_ratio=0.5)(lm.randn(1, 2, 10, 10)).shape
        lamina.Size([1, 2, 5, 5])
    """

    op = staticmethod(F.fractional_max_pool2d)


@register_layer("FractionalMaxPool3d")
class FractionalMaxPool3d(_FractionalMaxPool):
    """FractionalMaxPool2d over (N, C, D, H, W).

    Examples:
        >>> nn.FractionalMaxPool3d(2, output_size=3)(lm.randn(1, 1, 6, 6, 6)).shape
        lamina.Size([1, 1, 3, 3, 3])
    """

    op = staticmethod(F.fractional_max_pool3d)
