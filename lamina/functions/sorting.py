"""PyTorch's reductions that return indices: argmax/argmin, and (values, indices) from
max/min over a dim, sort, topk, kthvalue, median and mode. Values are gathered from the
input by their indices, so their gradient goes to the element each index names
(PyTorch's rule for max(dim), sort, topk, ...)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lamina import return_types
from lamina.autograd.tensor import Tensor
from lamina.functions.indexing import take_along
from lamina.functions.operands import constant_op
from lamina.functions.shape import wrap_dim


def argmax(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the largest value (the first one of ties), over `dim` or the flattened x."""
    return _arg(np.argmax, x, dim, keepdim)


def argmin(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    """Index of the smallest value (the first one of ties)."""
    return _arg(np.argmin, x, dim, keepdim)


def _arg(fn: Any, x: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    _nonempty(x, fn.__name__, dim)
    largest = fn is np.argmax
    if dim is None:
        out = constant_op(ArgIndex(largest, None, False), x)
        return out.reshape((1,) * x.ndim) if keepdim else out
    return constant_op(ArgIndex(largest, wrap_dim(dim, x.ndim, fn.__name__), keepdim), x)


@dataclass(frozen=True)
class ArgIndex:
    """argmax (largest) or argmin over `axis` (None: of the flattened array), as int64: a
    named function rather than a lambda, so that what it computes can be read back (an
    ONNX exporter maps it to ArgMax)."""

    largest: bool
    axis: int | None
    keepdims: bool

    def __call__(self, a: Any) -> Any:
        if a.ndim == 0:
            return np.zeros((), np.int64)
        fn = np.argmax if self.largest else np.argmin
        if self.axis is None:
            return np.asarray(fn(a), np.int64)
        return np.asarray(fn(a, axis=self.axis, keepdims=self.keepdims), np.int64)


def _nonempty(x: Tensor, op: str, dim: Any) -> None:
    if x.array.size == 0 and (dim is None or x.shape[wrap_dim(dim, x.ndim, op)] == 0):
        raise IndexError(f"{op}(): Expected reduction dim to be specified for input.numel() "
                         "== 0, or the reduced dim to have non-zero size")


def with_indices(kind: str, x: Tensor, indices: Tensor, dim: int, keepdim: bool) -> Any:
    """The (values, indices) named tuple, values gathered from x along `dim`."""
    values = take_along(x, indices, dim) if x.ndim else x.clone()
    if not keepdim and x.ndim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return getattr(return_types, kind)(values, indices)


def max_dim(kind: str, x: Tensor, dim: int, keepdim: bool = False) -> Any:
    """max(x, dim) / min(x, dim): (values, indices), first index of ties."""
    _nonempty(x, kind, dim)
    d = wrap_dim(dim, x.ndim, kind)
    idx = constant_op(ArgIndex(kind == "max", d, True), x)
    return with_indices(kind, x, idx, d, keepdim)


def sort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    """(values, indices) sorted along `dim` (ties keep their order: a stable sort)."""
    d = wrap_dim(dim, x.ndim, "sort")
    idx = _sorted_indices(x, d, descending)
    return with_indices("sort", x, idx, d, True)


def _sorted_indices(x: Tensor, d: int, descending: bool) -> Tensor:
    def order(a: Any) -> Any:
        if a.ndim == 0:
            return np.zeros((), np.int64)
        key = -a if descending and a.dtype.kind != "b" else a
        if descending and a.dtype.kind == "b":
            key = ~a
        return np.argsort(key, axis=d, kind="stable").astype(np.int64)
    return constant_op(order, x)


def argsort(x: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The indices that sort x along `dim`."""
    return _sorted_indices(x, wrap_dim(dim, x.ndim, "argsort"), descending)


def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    """(values, indices) of the k largest (or smallest) elements along `dim`, in order."""
    d = wrap_dim(dim, x.ndim, "topk")
    if not 0 <= k <= (x.shape[d] if x.ndim else 1):
        raise RuntimeError(f"topk: selected index k ({k}) out of range for a dim of size "
                           f"{x.shape[d] if x.ndim else 1}")
    idx = _sorted_indices(x, d, largest)
    if x.ndim:
        idx = idx.narrow(d, 0, k)
    return with_indices("topk", x, idx, d, True)


def kthvalue(x: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    """(values, indices) of the k-th smallest element along `dim` (k counts from 1)."""
    d = wrap_dim(dim, x.ndim, "kthvalue")
    n = x.shape[d] if x.ndim else 1
    if not 1 <= k <= n:
        raise IndexError(f"kthvalue(): selected number k ({k}) out of range for a dim of size "
                         f"{n}")
    idx = _sorted_indices(x, d, False)
    if x.ndim:
        idx = idx.narrow(d, k - 1, 1)
    return with_indices("kthvalue", x, idx, d, keepdim)


def median(x: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    """The lower median (of an even count, the smaller middle value), as PyTorch: a tensor
    over all elements, or (values, indices) along `dim`."""
    if dim is None:
        flat = x.reshape(-1)
        _nonempty(flat, "median", None)
        return kthvalue(flat, (flat.shape[0] + 1) // 2, 0).values
    n = x.shape[wrap_dim(dim, x.ndim, "median")] if x.ndim else 1
    out = kthvalue(x, (n + 1) // 2, dim, keepdim)
    return return_types.median(out.values, out.indices)


def mode(x: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    """(values, indices): the most frequent value along `dim` (the smallest of equally
    frequent ones) and the last index where it occurs, as PyTorch on the CPU."""
    d = wrap_dim(dim, x.ndim, "mode")

    def last_of_mode(a: Any) -> Any:
        if a.ndim == 0:
            return np.zeros((), np.int64)
        moved = np.moveaxis(a, d, -1)
        out = np.empty(moved.shape[:-1], np.int64)
        for pos in np.ndindex(*moved.shape[:-1]):
            row = moved[pos]
            vals, counts = np.unique(row, return_counts=True)
            best = vals[np.argmax(counts)]
            out[pos] = np.nonzero(row == best)[0][-1]
        return np.expand_dims(out, d)
    idx = constant_op(last_of_mode, x)
    return with_indices("mode", x, idx, d, keepdim)
