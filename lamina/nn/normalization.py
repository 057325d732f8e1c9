"""Normalisation layers: batch, layer and group norm (standardisation by the training
data's statistics: lamina.nn.standardize)."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


class _BatchNorm(Layer):
    dims: tuple[int, ...] = (2,)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, *,
                 bias: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(num_features, np.float32)) if affine and bias else None
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(num_features, np.float32))
            self.register_buffer("running_var", np.ones(num_features, np.float32))
            self.register_buffer("num_batches_tracked", np.zeros((), np.int64))
        else:  # batch statistics in evaluation too, as PyTorch's
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        if x.ndim not in self.dims or x.shape[1] != self.num_features:
            raise ShapeError(
                f"{name}: expected input of {' or '.join(map(str, self.dims))} dims with "
                f"{self.num_features} channels on axis 1; got shape {tuple(x.shape)}"
            )
        return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats, self.momentum,
                            self.eps, num_batches_tracked=self.num_batches_tracked)

    def reset_running_stats(self) -> None:
        """Running mean 0, variance 1, no batches counted (PyTorch's)."""
        if self.track_running_stats:
            self.running_mean.array[...] = 0
            self.running_var.array[...] = 1
            self.num_batches_tracked.array[...] = 0

    def reset_parameters(self) -> None:
        """The running statistics reset, the affine weight 1 and bias 0 (PyTorch's)."""
        self.reset_running_stats()
        if self.weight is not None:
            self.weight.array[...] = 1
        if self.bias is not None:
            self.bias.array[...] = 0

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if len(shape) not in self.dims or shape[1] == self.num_features:
            return None
        return f"num_features={shape[1]}"

    def get_config(self) -> dict[str, Any]:
        return {"num_features": self.num_features, "eps": self.eps, "momentum": self.momentum,
                "affine": self.affine, "track_running_stats": self.track_running_stats,
                "bias": self.bias is not None or not self.affine}

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


@register_layer("BatchNorm1d")
class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) input, per channel C.

    Buffers `running_mean`, `running_var` (unbiased) and `num_batches_tracked`, as in PyTorch.
    """

    dims = (2, 3)


@register_layer("BatchNorm2d")
class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) input, per channel C."""

    dims = (4,)


@register_layer("BatchNorm3d")
class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) input, per channel C."""

    dims = (5,)


@register_layer("LayerNorm")
class LayerNorm(Layer):
    """Normalise each sample over its trailing `normalized_shape` axes, as PyTorch's
    LayerNorm: no running statistics, the same in training and evaluation.

    Args:
        normalized_shape: the trailing shape to normalise over (an int for the last axis).
        eps: added to the variance for numerical stability.
        elementwise_affine: learn `weight` (ones) and `bias` (zeros) of that shape.
        bias: learn the bias too (with elementwise_affine).

    Examples:
        >>> norm = nn.LayerNorm(512)
        >>> norm(lm.tensor(np.zeros((8, 20, 512), np.float32))).shape
        (8, 20, 512)
    """

    def __init__(self, normalized_shape: int | list[int], eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True) -> None:
        super().__init__()
        shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                 else tuple(normalized_shape))
        if not shape or any(not isinstance(n, int) or n < 1 for n in shape):
            raise ValueError(f"LayerNorm: normalized_shape must be sizes >= 1; "
                             f"got {normalized_shape!r}")
        if eps <= 0:
            raise ValueError(f"LayerNorm: eps must be > 0; got {eps}")
        self.normalized_shape, self.eps = shape, eps
        affine = elementwise_affine
        self.weight = Parameter(np.ones(shape, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(shape, np.float32)) if affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        k = len(self.normalized_shape)
        if len(shape) < k or tuple(shape[len(shape) - k:]) == self.normalized_shape:
            return None
        fit = shape[-1] if k == 1 else list(shape[len(shape) - k:])
        return f"normalized_shape={fit}"

    def extra_repr(self) -> str:
        return (f"{tuple(self.normalized_shape)}, eps={self.eps}, "
                f"elementwise_affine={self.weight is not None}, bias={self.bias is not None}")

    def get_config(self) -> dict[str, Any]:
        shape = self.normalized_shape
        return {"normalized_shape": shape[0] if len(shape) == 1 else list(shape),
                "eps": self.eps, "elementwise_affine": self.weight is not None,
                "bias": self.bias is not None}


@register_layer("GroupNorm")
class GroupNorm(Layer):
    """Normalise each sample's channels in groups, as PyTorch's GroupNorm (Wu and He,
    2018): no running statistics and no dependence on the batch, so it behaves the same
    at batch size 2 as at 256, and in training as in evaluation.

    Args:
        num_groups: how many groups the channels form; num_channels must be a multiple.
        num_channels: C of the (N, C, *) input.
        eps: added to the variance for numerical stability.
        affine: learn a per-channel `weight` (ones) and `bias` (zeros).

    Examples:
        >>> norm = nn.GroupNorm(8, 64)          # 8 groups of 8 channels
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, *, bias: bool = True) -> None:
        super().__init__()
        if num_groups < 1 or num_channels < 1 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels must be a multiple of num_groups; got "
                             f"num_groups={num_groups}, num_channels={num_channels}")
        if eps <= 0:
            raise ValueError(f"GroupNorm: eps must be > 0; got {eps}")
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.affine = affine
        self.weight = Parameter(np.ones(num_channels, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(num_channels, np.float32)) if affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ShapeError(f"GroupNorm: expected input (N, {self.num_channels}, ...) with "
                             f"the channels on axis 1; got shape {tuple(x.shape)}")
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if len(shape) < 2 or shape[1] == self.num_channels or shape[1] % self.num_groups:
            return None
        return f"num_channels={shape[1]}"

    def get_config(self) -> dict[str, Any]:
        return {"num_groups": self.num_groups, "num_channels": self.num_channels,
                "eps": self.eps, "affine": self.affine,
                "bias": self.bias is not None or not self.affine}

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")
