"""More pooling layers: the 3-D adaptive poolings, power-average (LP) pooling and
ChannelShuffle."""

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
