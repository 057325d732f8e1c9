"""Standardisation by fixed statistics: (x - mean) / std per feature, scikit-learn's
StandardScaler as one op (nn.Standardize's), with the statistics read at every call."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import floating


class Standardize(Function):
    """(x - mean) / std along one axis, the statistics given as arrays and read at every
    call (a layer's buffers, which its `adapt` rewrites in place)."""

    def __init__(self, mean: Any, std: Any, axis: int) -> None:
        self.mean, self.std, self.axis = mean, std, axis

    def forward(self, x: Any, *, out: Any = None) -> Any:
        """out: an array of x's shape, in x's memory order, to write the result into."""
        x = floating(x)
        axis = self.axis if self.axis >= 0 else x.ndim + self.axis
        if not 0 <= axis < x.ndim or x.shape[axis] != self.mean.shape[0]:
            raise ShapeError(f"standardize: expected {self.mean.shape[0]} features on axis "
                             f"{self.axis}; got shape {x.shape}")
        shape = (-1,) + (1,) * (x.ndim - 1 - axis)
        self.scale = self.std.reshape(shape).astype(x.dtype, copy=False)
        y = np.subtract(x, self.mean.reshape(shape).astype(x.dtype, copy=False),
                        out=out)
        y /= self.scale
        return y

    def backward(self, gy: Any) -> Any:
        return gy / self.scale


def standardize(x: Tensor, mean: Any, std: Any, axis: int = 1) -> Tensor:
    """(x - mean) / std, per feature along `axis`: scikit-learn's StandardScaler as an op.

    Args:
        x: input with mean.shape[0] features on `axis`.
        mean, std: arrays (or tensors, read as constants) of shape (features,).
        axis: the feature axis; negative counts from the end.

    Returns:
        A tensor of x's shape. Only x takes a gradient: 1 / std.

    Examples:
        >>> F.standardize(x, np.array([0.5, 2.0]), np.array([1.0, 4.0]))  # x (N, 2)
    """
    mean, std = (np.asarray(getattr(a, "array", a)) for a in (mean, std))
    if mean.ndim != 1 or std.shape != mean.shape:
        raise ShapeError(f"standardize: mean and std must be vectors of one length; got "
                         f"{tuple(mean.shape)} and {tuple(std.shape)}")
    return Standardize(mean, std, axis).apply(x)
