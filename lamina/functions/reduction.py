"""PyTorch's reductions of values: sum, mean, var/std, prod, logsumexp, cumsum/cumprod,
norm, amax/amin, all/any/count_nonzero. Every function takes `dim` (an int or a tuple;
None: all dims) and `keepdim`; amax / amin split the gradient among ties. The ones that
return indices (argmax, max over a dim, sort, topk, ...) are in lamina.functions.sorting.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions._util import expand_reduced
from lamina.functions.axis_reductions import max as _max
from lamina.functions.axis_reductions import min as _min
from lamina.functions.axis_reductions import sum as _sum
from lamina.functions.math import mul
from lamina.functions.operands import cast, constant_op, floating
from lamina.functions.shape import wrap_dim
from lamina.functions.unary import abs as _abs


def dims(dim: Any, ndim: int) -> tuple[int, ...]:
    """PyTorch's `dim` argument (None, an int, a tuple; () is all dims) as sorted axes."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    if isinstance(dim, (int, np.integer)):
        return (wrap_dim(dim, ndim, "reduction"),) if ndim else ()
    return tuple(sorted({wrap_dim(d, ndim, "reduction") for d in dim})) if ndim else ()


def sum(x: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Sum over `dim`; bool and integer tensors sum to int64, as in PyTorch."""
    if dtype is not None:
        x = cast(x, dtypes.resolve(dtype))
    elif x.array.dtype.kind in "biu":
        x = cast(x, dtypes.int64)
    return _sum(x, dims(dim, x.ndim), keepdim)


def mean(x: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """Mean over `dim` (floating-point tensors only, as in PyTorch)."""
    if dtype is not None:
        x = cast(x, dtypes.resolve(dtype))
    if x.array.dtype.kind not in "fc":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {x.dtype}; use x.float()")
    axes = dims(dim, x.ndim)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if n == 0:
        return mul(_sum(x, axes, keepdim), float("nan"))
    return mul(_sum(x, axes, keepdim), 1.0 / n)


def var(x: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Variance over `dim`, divided by N - correction (correction 1 by default, Bessel's;
    `unbiased=False` means correction 0). `x.var(1)` and `x.var(1, unbiased=False)` work as
    in PyTorch, as does `x.var(False)` (the old unbiased-first form)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    axes = dims(dim, x.ndim)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    centred = x - mean(x, axes, keepdim=True)
    # N - correction <= 0 gives inf (0 * inf = nan for a constant), as PyTorch gives
    denominator = n - correction
    scale = 1.0 / denominator if denominator > 0 else float("inf")
    return mul(_sum(centred * centred, axes, keepdim), scale)


def std(x: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
        correction: Any = None) -> Tensor:
    """Standard deviation: the square root of `var` (same arguments)."""
    return var(x, dim, unbiased, keepdim, correction=correction) ** 0.5


class Prod(Function):
    """The product along one axis. d(prod)/dx_i is the product of the others, formed from
    exclusive cumulative products from both sides so that zeros need no division."""

    def __init__(self, axis: int, keepdims: bool) -> None:
        self.axis, self.keepdims = axis, keepdims

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return np.prod(x, axis=self.axis, keepdims=self.keepdims)

    def backward(self, gy: Any) -> Any:
        (x,) = self.saved_tensors
        xm = np.moveaxis(x, self.axis, -1)
        ones = np.ones(xm.shape[:-1] + (1,), x.dtype)
        left = np.cumprod(np.concatenate([ones, xm[..., :-1]], -1), -1)
        right = np.cumprod(np.concatenate([ones, xm[..., :0:-1]], -1), -1)[..., ::-1]
        gy = expand_reduced(gy, x.shape, (self.axis,), self.keepdims)
        return (np.moveaxis(left * right, -1, self.axis) * gy).astype(x.dtype, copy=False)


def prod(x: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """Product over one dim (None: all elements); integers give int64."""
    if dtype is not None:
        x = cast(x, dtypes.resolve(dtype))
    elif x.array.dtype.kind in "biu":
        x = cast(x, dtypes.int64)
    if dim is None:
        return Prod(0, False).apply(x.reshape(-1))
    return Prod(wrap_dim(dim, x.ndim, "prod"), keepdim).apply(x)


class LogSumExp(Function):
    """log(sum(exp(x))) over axes, shifted by the max so it never overflows; the gradient
    is softmax(x)."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool) -> None:
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x: Any) -> Any:
        m = np.max(x, axis=self.axes, keepdims=True) if x.size else np.zeros((1,) * x.ndim)
        m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)
        with np.errstate(divide="ignore"):
            y = np.log(np.exp(x - m).sum(axis=self.axes, keepdims=True)) + m
        self.save_for_backward(x, y)
        return y if self.keepdims else np.squeeze(y, self.axes)

    def backward(self, gy: Any) -> Any:
        x, y = self.saved_tensors
        gy = expand_reduced(gy, x.shape, self.axes, self.keepdims)
        return (gy * np.exp(x - y)).astype(x.dtype, copy=False)


def logsumexp(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, computed stably."""
    return LogSumExp(dims(dim, x.ndim), keepdim).apply(floating(x))


class CumSum(Function):
    complex_rule = "holomorphic"

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any) -> Any:
        return np.cumsum(x, axis=self.axis, dtype=x.dtype)

    def backward(self, gy: Any) -> Any:
        # each x_i feeds every later sum: the gradient is gy summed from the end
        return np.flip(np.cumsum(np.flip(gy, self.axis), axis=self.axis), self.axis)


class CumProd(Function):
    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any) -> Any:
        y = np.cumprod(x, axis=self.axis, dtype=x.dtype)
        self.save_for_backward(x, y)
        return y

    def backward(self, gy: Any) -> Any:
        x, y = self.saved_tensors
        a = self.axis
        if np.all(x != 0):  # d y_j / d x_i = y_j / x_i for j >= i
            return np.flip(np.cumsum(np.flip(gy * y, a), axis=a), a) / x
        gx = np.empty_like(x)  # with zeros: the exact products, one position at a time
        for i in range(x.shape[a]):
            ones = x.copy()
            np.moveaxis(ones, a, 0)[i] = 1
            part = np.moveaxis(np.cumprod(ones, axis=a) * gy, a, 0)[i:].sum(axis=0)
            np.moveaxis(gx, a, 0)[i] = part
        return gx


def cumsum(x: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running sums along `dim`; integers accumulate in int64."""
    x = cast(x, dtypes.resolve(dtype)) if dtype is not None else (
        cast(x, dtypes.int64) if x.array.dtype.kind in "biu" else x)
    return CumSum(wrap_dim(dim, x.ndim, "cumsum")).apply(x)


def cumprod(x: Tensor, dim: int, *, dtype: Any = None) -> Tensor:
    """Running products along `dim`."""
    x = cast(x, dtypes.resolve(dtype)) if dtype is not None else (
        cast(x, dtypes.int64) if x.array.dtype.kind in "biu" else x)
    return CumProd(wrap_dim(dim, x.ndim, "cumprod")).apply(x)


class Norm(Function):
    """The 2-norm over axes; its gradient x / norm is defined as 0 where the norm is 0, as
    PyTorch defines it."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool) -> None:
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x: Any) -> Any:
        y = np.sqrt(np.square(x).sum(axis=self.axes, keepdims=True))
        self.save_for_backward(x, y)
        return y if self.keepdims else np.squeeze(y, self.axes)

    def backward(self, gy: Any) -> Any:
        x, y = self.saved_tensors
        gy = expand_reduced(gy, x.shape, self.axes, self.keepdims)
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(y == 0, 0, x / y) * gy
        return g.astype(x.dtype, copy=False)


def norm(x: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """The p-norm over `dim` (all elements by default): p = 2 or "fro" (Euclidean), 1, inf,
    -inf, 0 (count of non-zeros) or any other number."""
    if dtype is not None:
        x = cast(x, dtypes.resolve(dtype))
    if x.array.dtype.kind == "c":  # every p-norm of z is that of |z|, a real norm
        x = _abs(x)
    axes = dims(dim, x.ndim)
    if p in ("fro", 2, 2.0, None):
        return Norm(axes, keepdim).apply(x)
    if p == "nuc":
        raise NotImplementedError("norm: p='nuc' is not supported; use a matrix SVD")
    if p == float("inf"):
        return _max(_abs(x), axes, keepdim)
    if p == float("-inf"):
        return _min(_abs(x), axes, keepdim)
    from lamina.functions.pnorm import PNorm  # it imports this module's helpers

    return PNorm(p, axes, keepdim).apply(x)


def amax(x: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The largest value over `dim`; tied maxima share the gradient evenly."""
    return _max(x, dims(dim, x.ndim), keepdim)


def amin(x: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:
    """The smallest value over `dim`; tied minima share the gradient evenly."""
    return _min(x, dims(dim, x.ndim), keepdim)


def all(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether every element is true (non-zero), over `dim`; a bool tensor."""
    axes = dims(dim, x.ndim)
    return constant_op(lambda a: np.asarray(np.all(a, axis=axes, keepdims=keepdim)), x)


def any(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Whether any element is true (non-zero), over `dim`; a bool tensor."""
    axes = dims(dim, x.ndim)
    return constant_op(lambda a: np.asarray(np.any(a, axis=axes, keepdims=keepdim)), x)


def count_nonzero(x: Tensor, dim: Any = None) -> Tensor:
    """How many elements are non-zero, over `dim`; int64."""
    axes = dims(dim, x.ndim)
    return constant_op(lambda a: np.asarray(np.count_nonzero(a, axis=axes), np.int64), x)
