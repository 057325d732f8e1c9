"""sum, mean, max and min over NumPy-style `axis` and `keepdims`: the primitives behind
Tensor's reductions. PyTorch's, over `dim` and `keepdim`, are built on them in
lamina.functions.reduction."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions._util import expand_reduced, normalize_axis
from lamina.functions.math import mul


class Sum(Function):
    complex_rule = "holomorphic"

    def __init__(self, axis: Any, keepdims: bool) -> None:
        self.axis, self.keepdims = axis, keepdims

    def forward(self, x: Any) -> Any:
        self.x_shape = x.shape
        self.axes = normalize_axis(self.axis, x.ndim)
        return np.asarray(x.sum(axis=self.axes, keepdims=self.keepdims))

    def backward(self, gy: Any) -> Any:
        gy = expand_reduced(gy, self.x_shape, self.axes, self.keepdims)
        return np.broadcast_to(gy, self.x_shape)


class Extremum(Function):
    """max or min over axes; tied elements share the gradient equally (like torch.amax)."""

    def __init__(self, axis: Any, keepdims: bool, largest: bool) -> None:
        self.axis, self.keepdims, self.largest = axis, keepdims, largest

    def forward(self, x: Any) -> Any:
        if x.size == 0:
            raise ValueError("max/min: cannot reduce an empty tensor")
        self.axes = normalize_axis(self.axis, x.ndim)
        reduce = np.max if self.largest else np.min
        y = np.asarray(reduce(x, axis=self.axes, keepdims=True))
        self.save_for_backward(x, y)
        return y if self.keepdims else np.squeeze(y, axis=self.axes)

    def backward(self, gy: Any) -> Any:
        x, y = self.saved_tensors
        gy = expand_reduced(gy, x.shape, self.axes, self.keepdims)
        hit = x == y
        count = hit.sum(axis=self.axes, keepdims=True)
        return (hit * (gy / count)).astype(x.dtype, copy=False)


def sum(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Sum over `axis` (None: all axes)."""
    return Sum(axis, keepdims).apply(x)


def mean(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Mean over `axis` (None: all axes)."""
    axes = normalize_axis(axis, x.ndim)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    return mul(sum(x, axis, keepdims), 1.0 / builtins.max(n, 1))


def max(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Largest value over `axis`; ties split the gradient evenly."""
    return Extremum(axis, keepdims, largest=True).apply(x)


def min(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Smallest value over `axis`; ties split the gradient evenly."""
    return Extremum(axis, keepdims, largest=False).apply(x)
