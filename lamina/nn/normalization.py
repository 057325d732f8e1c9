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
