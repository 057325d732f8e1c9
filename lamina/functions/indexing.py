"""Indexing ops: gather / scatter, index_select / index_add / index_fill, masked_select,
nonzero, `x[key] = value` and one_hot (triangles and diagonals: lamina.functions.diagonals).

The gather family shares one helper (`_along`) that turns PyTorch's (dim, index) pair into
a NumPy index, so forward reads `x[idx]` and backward adds `gy` back with `np.add.at`, which
sums every repeated index.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import sum_to
from lamina.functions.array import broadcast_to, getitem
from lamina.functions.operands import cast, constant_op
from lamina.functions.shape import wrap_dim


def _along(index: Any, axis: int) -> tuple[Any, ...]:
    """The NumPy index that picks x[i0, .., index[i0, .., ik, ..], ..] for every position of
    `index` (PyTorch's gather with dim=axis)."""
    ndim = index.ndim
    grids = [np.arange(n).reshape([n if i == d else 1 for i in range(ndim)])
             for d, n in enumerate(index.shape)]
    grids[axis] = index
    return tuple(grids)


def _check_index(op: str, x: Any, index: Any, axis: int) -> None:
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index; got {index.dtype}")
    if index.ndim != x.ndim and x.ndim:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"input tensor; got {index.ndim} and {x.ndim}")
    for d in range(index.ndim):
        if d != axis and index.shape[d] > x.shape[d]:
            raise RuntimeError(f"{op}(): Size does not match at dimension {d}: expected index "
                               f"{tuple(index.shape)} to be no larger than self "
                               f"{tuple(x.shape)} apart from dimension {axis}")
    if index.size and (index.min() < -x.shape[axis] or index.max() >= x.shape[axis]):
        raise IndexError(f"{op}(): index {int(index.max())} is out of bounds for dimension "
                         f"{axis} with size {x.shape[axis]}")


class Gather(Function):
    complex_rule = "holomorphic"

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any, index: Any) -> Any:
        _check_index("gather", x, index, self.axis)
        self.x_meta = (x.shape, x.dtype)
        self.save_for_backward(index)
        return x[_along(index, self.axis)]

    def backward(self, gy: Any) -> tuple[Any, None]:
        gx = np.zeros(*self.x_meta)
        np.add.at(gx, _along(self.saved_tensors[0], self.axis), gy)
        return gx, None


def gather(x: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False) -> Tensor:
    """out[i][j] = x[index[i][j]][j] for dim 0 (and so on): values picked along `dim`.

    Examples:
        >>> lm.tensor([[1, 2], [3, 4]]).gather(1, lm.tensor([[1], [0]]))
        tensor([[2],
                [3]])
    """
    if x.ndim == 0:
        return x.reshape(1).gather(0, index.reshape(1)).reshape(())
    return Gather(wrap_dim(dim, x.ndim, "gather")).apply(x, index)


def take_along(x: Tensor, index: Tensor, dim: int) -> Tensor:
    """gather with a non-negative dim already checked (the (values, indices) reductions)."""
    return Gather(dim).apply(x, index)


class Scatter(Function):
    """x with `src` written (or, with add, added) at the positions (dim, index) name."""

    complex_rule = "holomorphic"

    def __init__(self, axis: int, add: bool) -> None:
        self.axis, self.add = axis, add

    def forward(self, x: Any, index: Any, src: Any) -> Any:
        _check_index("scatter_add" if self.add else "scatter", x, index, self.axis)
        key = _along(index, self.axis)
        self.save_for_backward(index)
        self.src_meta = (src.shape, src.dtype)
        part = src[tuple(slice(n) for n in index.shape)] if src.ndim else src
        out = x.copy()
        if self.add:
            np.add.at(out, key, part)
        else:
            out[key] = part
        return out

    def backward(self, gy: Any) -> tuple[Any, None, Any]:
        need_x, _, need_src = self.needs_input_grad
        key = _along(self.saved_tensors[0], self.axis)
        gx = gsrc = None
        if need_x:
            gx = gy.copy()
            if not self.add:
                gx[key] = 0
        if need_src:
            shape, dtype = self.src_meta
            gsrc = np.zeros(shape, dtype)
            picked = gy[key]
            if gsrc.ndim:
                gsrc[tuple(slice(n) for n in picked.shape)] = picked
            else:
                gsrc = picked.sum().astype(dtype)
        return gx, None, gsrc


def scatter(x: Tensor, dim: int, index: Tensor, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    """x with src's values (or `value`) written at index along dim (out of place); with
    `reduce` ("add" or "multiply"), combined with x's there instead, as PyTorch's."""
    src = value if src is None else src
    src = cast(src, x.dtype) if isinstance(src, Tensor) else Tensor(np.asarray(src, x.dtype))
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"scatter: reduce argument must be either add or multiply; got "
                               f"{reduce!r}")
        if src.ndim == 0:  # a value: one per index, as PyTorch broadcasts it
            src = src.expand(*index.shape)
        if reduce == "add":
            return scatter_add(x, dim, index, src)
        return x.scatter_reduce(dim, index, src, "prod", include_self=True)
    return Scatter(wrap_dim(dim, x.ndim, "scatter"), False).apply(x, index, src)


def scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """x with src's values added at index along dim; repeated indices add up."""
    return Scatter(wrap_dim(dim, x.ndim, "scatter_add"), True).apply(x, index,
                                                                    cast(src, x.dtype))


class IndexSelect(Function):
    complex_rule = "holomorphic"

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any, index: Any) -> Any:
        if index.ndim > 1 or index.dtype.kind not in "iu":
            raise RuntimeError("index_select(): Index is supposed to be a vector of integers")
        self.x_meta = (x.shape, x.dtype)
        self.save_for_backward(index)
        return np.take(x, index, axis=self.axis)

    def backward(self, gy: Any) -> tuple[Any, None]:
        gx = np.zeros(*self.x_meta)
        np.add.at(np.moveaxis(gx, self.axis, 0), self.saved_tensors[0],
                  np.moveaxis(gy, self.axis, 0))
        return gx, None


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of x along `dim` at the positions in `index` (a 1-D integer tensor)."""
    return IndexSelect(wrap_dim(dim, x.ndim, "index_select")).apply(x, index)


class IndexAdd(Function):
    complex_rule = "holomorphic"

    def __init__(self, axis: int, alpha: float) -> None:
        self.axis, self.alpha = axis, alpha

    def forward(self, x: Any, index: Any, source: Any) -> Any:
        self.save_for_backward(index)
        out = x.copy()
        np.add.at(np.moveaxis(out, self.axis, 0), index,
                  np.moveaxis(source * self.alpha, self.axis, 0).astype(x.dtype, copy=False))
        return out

    def backward(self, gy: Any) -> tuple[Any, None, Any]:
        gsrc = np.take(gy, self.saved_tensors[0], axis=self.axis) * self.alpha
        return gy, None, gsrc.astype(gy.dtype, copy=False)


def index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: float = 1) -> Tensor:
    """x with alpha * source's slices added at `index` along `dim` (out of place)."""
    return IndexAdd(wrap_dim(dim, x.ndim, "index_add"), alpha).apply(
        x, index, cast(source, x.dtype))


class IndexFill(Function):
    def __init__(self, axis: int, value: Any) -> None:
        self.axis, self.value = axis, value

    def forward(self, x: Any, index: Any) -> Any:
        self.save_for_backward(index)
        out = x.copy()
        np.moveaxis(out, self.axis, 0)[index] = self.value
        return out

    def backward(self, gy: Any) -> tuple[Any, None]:
        gx = gy.copy()
        np.moveaxis(gx, self.axis, 0)[self.saved_tensors[0]] = 0
        return gx, None


def index_fill(x: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:
    """x with `value` in the slices at `index` along `dim` (out of place)."""
    value = value.item() if isinstance(value, Tensor) else value
    return IndexFill(wrap_dim(dim, x.ndim, "index_fill"), value).apply(x, index)


def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    """The elements of x where mask (broadcast together) is true, as a 1-D tensor."""
    shape = np.broadcast_shapes(x.shape, mask.shape)
    if tuple(x.shape) != shape:
        x = broadcast_to(x, shape)
    m = mask.array if tuple(mask.shape) == shape else np.broadcast_to(mask.array, shape)
    return getitem(x, Tensor(np.ascontiguousarray(m)))


def nonzero(x: Tensor, *, as_tuple: bool = False) -> Any:
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or with as_tuple one
    1-D tensor per dim."""
    if as_tuple:
        if x.ndim == 0:
            return (constant_op(lambda a: np.zeros(int(bool(a)), np.int64), x),)
        return tuple(constant_op(lambda a, d=d: np.nonzero(a)[d].astype(np.int64), x)
                     for d in range(x.ndim))
    return constant_op(lambda a: np.argwhere(a).astype(np.int64), x)


class SetItem(Function):
    """x with value written at key, out of place (the in-place write happens in Tensor)."""

    complex_rule = "holomorphic"

    def __init__(self, key: Any) -> None:
        self.key = key

    def forward(self, x: Any, value: Any) -> Any:
        self.v_meta = (value.shape, value.dtype)
        out = x.copy()
        try:
            out[self.key] = value
        except ValueError as e:
            raise ShapeError(f"setitem: the value of shape {value.shape} does not fit "
                             f"x[key] of x's shape {x.shape}: {e}") from None
        return out

    def backward(self, gy: Any) -> tuple[Any, Any]:
        need_x, need_v = self.needs_input_grad
        gx = gv = None
        if need_x:
            gx = gy.copy()
            gx[self.key] = 0
        if need_v:
            gv = sum_to(np.asarray(gy[self.key]), self.v_meta[0]).astype(self.v_meta[1],
                                                                       copy=False)
        return gx, gv


def setitem(x: Tensor, key: Any, value: Any) -> Tensor:
    """x with `value` written at `key`, as a new tensor with gradients to both."""
    parts = key if isinstance(key, tuple) else (key,)
    plain = tuple(p.array if isinstance(p, Tensor) else p for p in parts)
    key = plain if isinstance(key, tuple) else plain[0]
    if isinstance(key, list):
        key = np.asarray(key)
    value = cast(value, x.dtype) if isinstance(value, Tensor) else Tensor(
        np.asarray(value, x.dtype))
    return SetItem(key).apply(x, value)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Integer classes as rows of 0s with a 1 at each class: shape (*tensor.shape, C),
    int64; C is the largest class + 1 unless given.

    Examples:
        >>> F.one_hot(lm.tensor([0, 2]))
        tensor([[1, 0, 0],
                [0, 0, 1]])
    """
    ids = tensor.array
    if ids.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor")
    n = int(ids.max()) + 1 if num_classes == -1 and ids.size else max(num_classes, 0)
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        raise RuntimeError(f"one_hot: class values must be in [0, {n}); got "
                           f"[{int(ids.min())}, {int(ids.max())}]")
    return Tensor((ids[..., None] == np.arange(n)).astype(np.int64))

