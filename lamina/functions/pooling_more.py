"""More of PyTorch's pooling names: the 3-D adaptive poolings, power-average (LP) pooling,
channel shuffle, the `*_with_indices` forms, and the deprecated `upsample` aliases of
interpolate. Each is built from the poolings and shape ops that exist."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.functions import adaptive_pool, pooling, resample, volume
from lamina.functions._util import unbatched


@unbatched(3)
def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Mean over adaptive bins of an (N, C, D, H, W) input to (N, C, *output_size), as
    PyTorch's; an int is used on every axis, None keeps that axis.

    Examples:
        >>> F.adaptive_avg_pool3d(lm.ones(1, 2, 4, 4, 4), 1).shape
        lamina.Size([1, 2, 1, 1, 1])
    """
    return adaptive_pool.AdaptiveAvgPool(3, output_size).apply(input)


@unbatched(3)
def adaptive_max_pool3d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """Max over an output_size grid of bins of the last three axes (None keeps an axis).

    Examples:
        >>> F.adaptive_max_pool3d(lm.zeros(1, 2, 4, 4, 4), (2, 1, 2)).shape
        lamina.Size([1, 2, 2, 1, 2])
    """
    size = (output_size,) * 3 if output_size is None or np.isscalar(output_size) \
        else tuple(output_size)
    return volume._adaptive_max(input, size, return_indices, "adaptive_max_pool3d")


def _lp_pool(input: Tensor, nd: int, norm_type: float, kernel_size: Any, stride: Any,
             ceil_mode: bool) -> Tensor:
    """(sum over each window of x ** p) ** (1 / p): the average pool of x ** p times the
    window's size, as PyTorch computes it (a negative mean clamped to 0 first)."""
    k = (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)
    pool = {1: pooling.avg_pool1d, 2: pooling.avg_pool2d, 3: volume.avg_pool3d}[nd]
    mean = pool(input.pow(norm_type), k, stride, 0, ceil_mode)
    return (mean.sign() * mean.abs().relu() * float(np.prod(k))).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int,  # noqa: A002
              stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of an (N, C, L) input: each window's p-norm.

    Examples:
        >>> F.lp_pool1d(lm.tensor([[[3.0, 4.0]]]), 2, 2)
        tensor([[[5.]]])
    """
    return _lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any,  # noqa: A002
              stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of an (N, C, H, W) input: each window's p-norm.

    Examples:
        >>> F.lp_pool2d(lm.ones(1, 1, 2, 2), 1, 2)
        tensor([[[[4.]]]])
    """
    return _lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any,  # noqa: A002
              stride: Any = None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling of an (N, C, D, H, W) input: each window's p-norm.

    Examples:
        >>> F.lp_pool3d(lm.ones(1, 1, 2, 2, 2), 1, 2).shape
        lamina.Size([1, 1, 1, 1, 1])
    """
    return _lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """The channels of (N, C, *) regrouped: split into `groups` groups, channel j of group
    g goes to place j * groups + g (ShuffleNet's shuffle).

    Examples:
        >>> F.channel_shuffle(lm.arange(4.0).reshape(1, 4, 1), 2).flatten().tolist()
        [0.0, 2.0, 1.0, 3.0]
    """
    n, c, *rest = input.shape
    if groups < 1 or c % groups:
        raise RuntimeError(f"channel_shuffle: the channels ({c}) must divide into groups "
                           f"({groups})")
    x = input.reshape(n, groups, c // groups, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest)


def _with_indices(pool: Any, name: str) -> Any:
    def function(*args: Any, **kwargs: Any) -> Any:
        kwargs["return_indices"] = True
        return pool(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"`F.{pool.__name__}(..., return_indices=True)`: (values, indices).\n\n"
                        f"Examples:\n    >>> values, indices = F.{name}(lm.zeros(1, 1, 4, 4, 4)"
                        f"{'' if '3d' in name else '[0]' if '2d' in name else '[0, 0]'}, 2)")
    return function


max_pool1d_with_indices = _with_indices(pooling.max_pool1d, "max_pool1d_with_indices")
max_pool2d_with_indices = _with_indices(pooling.max_pool2d, "max_pool2d_with_indices")
max_pool3d_with_indices = _with_indices(volume.max_pool3d, "max_pool3d_with_indices")
adaptive_max_pool1d_with_indices = _with_indices(volume.adaptive_max_pool1d,
                                                 "adaptive_max_pool1d_with_indices")
adaptive_max_pool2d_with_indices = _with_indices(volume.adaptive_max_pool2d,
                                                 "adaptive_max_pool2d_with_indices")
adaptive_max_pool3d_with_indices = _with_indices(adaptive_max_pool3d,
                                                 "adaptive_max_pool3d_with_indices")


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None,  # noqa: A002
             mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """PyTorch's deprecated name for `interpolate`.

    Examples:
        >>> F.upsample(lm.ones(1, 1, 2), scale_factor=2).shape
        lamina.Size([1, 1, 4])
    """
    return resample.interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None,  # noqa: A002
                     scale_factor: Any = None) -> Tensor:
    """`interpolate(..., mode="nearest")` (deprecated in PyTorch).

    Examples:
        >>> F.upsample_nearest(lm.ones(1, 1, 2, 2), scale_factor=2).shape
        lamina.Size([1, 1, 4, 4])
    """
    return resample.interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input: Tensor, size: Any = None,  # noqa: A002
                      scale_factor: Any = None) -> Tensor:
    """`interpolate(..., mode="bilinear", align_corners=True)` (deprecated in PyTorch).

    Examples:
        >>> F.upsample_bilinear(lm.ones(1, 1, 2, 2), size=3).shape
        lamina.Size([1, 1, 3, 3])
    """
    return resample.interpolate(input, size, scale_factor, "bilinear", align_corners=True)
