"""Batch normalisation layers."""

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

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = True) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.weight = Parameter(np.ones(num_features, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(num_features, np.float32)) if affine else None
        self.register_buffer("running_mean", np.zeros(num_features, np.float32))
        self.register_buffer("running_var", np.ones(num_features, np.float32))
        self.register_buffer("num_batches_tracked", np.zeros((), np.int64))

    def forward(self, x: Tensor) -> Tensor:
        name = type(self).__name__
        if x.ndim not in self.dims or x.shape[1] != self.num_features:
            raise ShapeError(
                f"{name}: expected input of {' or '.join(map(str, self.dims))} dims with "
                f"{self.num_features} channels on axis 1; got shape {x.shape}"
            )
        return F.batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var,
                            self.training, self.momentum, self.eps, self.num_batches_tracked)

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if len(shape) not in self.dims or shape[1] == self.num_features:
            return None
        return f"num_features={shape[1]}"

    def get_config(self) -> dict[str, Any]:
        return {"num_features": self.num_features, "eps": self.eps, "momentum": self.momentum,
                "affine": self.weight is not None}


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


@register_layer("LayerNorm")
class LayerNorm(Layer):
    """Normalise each sample over its trailing `normalized_shape` axes, as PyTorch's
    LayerNorm: no running statistics, the same in training and evaluation.

    Args:
        normalized_shape: the trailing shape to normalise over (an int for the last axis).
        eps: added to the variance for numerical stability.
        elementwise_affine: learn `weight` (ones) and `bias` (zeros) of that shape.
        bias: learn the bias too (with elementwise_affine).

    Example:
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

    def get_config(self) -> dict[str, Any]:
        shape = self.normalized_shape
        return {"normalized_shape": shape[0] if len(shape) == 1 else list(shape),
                "eps": self.eps, "elementwise_affine": self.weight is not None,
                "bias": self.bias is not None}
