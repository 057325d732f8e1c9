"""PyTorch's shape ops: view, permute, transpose, squeeze, expand, cat, stack, ...
(repeating, cutting and flipping: lamina.functions.pieces).

Most are one of the primitives in `array.py` (reshape, transpose, getitem, broadcast) with
PyTorch's argument conventions. Every function takes `dim` as PyTorch names it (negative
dims count from the end) and errors name the op, the shapes and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.array import broadcast_to, concat, reshape, transpose
from lamina.functions.array import stack as _stack
from lamina.functions.operands import AsType, promote_all


def wrap_dim(dim: Any, ndim: int, op: str) -> int:
    """`dim` as a non-negative axis; a 0-d tensor accepts dims -1 and 0, as in PyTorch."""
    n = max(ndim, 1)
    if not isinstance(dim, (int, np.integer)) or not -n <= dim < n:
        raise IndexError(f"{op}: Dimension out of range (expected to be in range of "
                         f"[{-n}, {n - 1}], but got {dim})")
    return int(dim) % n


def sizes_arg(sizes: tuple[Any, ...]) -> tuple[int, ...]:
    """`f(2, 3)` and `f((2, 3))` alike, as PyTorch's size arguments."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, np.ndarray)):
        sizes = tuple(sizes[0])
    return tuple(int(s) for s in sizes)


def share_version(out: Tensor, x: Tensor) -> Tensor:
    """A result that views x's memory shares its version counter, as PyTorch's views do,
    so writing through either one is seen by ops that saved the other."""
    base = out.array.base
    if base is not None and (base is x.array or base is x.array.base):
        out._vc = x._counter()
    return out


def view(x: Tensor, *shape: Any) -> Tensor:
    """x's memory seen with another shape (one size may be -1), without a copy, as
    PyTorch's. Where lamina chose x's memory order (a convolution's output is
    channel-major, see Tensor._layout_chosen), PyTorch's tensor would be contiguous and
    its view would succeed: x is then reshaped, copying if its memory cannot be viewed so.

    Raises:
        RuntimeError: x's strides (after a transpose, say) cannot be viewed so; `reshape`
            copies when it must.
        ShapeError: the shape does not hold x's number of elements.

    Examples:
        >>> lm.arange(6).view(2, -1).shape
        lamina.Size([2, 3])
    """
    shape = sizes_arg(shape)
    if not _holds(shape, x.array.size):
        raise ShapeError(f"view: shape {list(shape)} is invalid for input of size "
                         f"{x.array.size}")
    probe = x.array.view()
    try:
        probe.shape = shape
    except (AttributeError, ValueError):
        if x._layout_chosen:
            return reshape(x, shape)
        raise RuntimeError(
            f"view: size {list(shape)} is not compatible with the input's size "
            f"{tuple(x.shape)} and stride (at least one dimension spans across two "
            "contiguous subspaces); use .reshape(...) instead") from None
    return share_version(reshape(x, shape), x)


def _holds(shape: tuple[int, ...], size: int) -> bool:
    """Whether `shape` (at most one -1, the rest non-negative) has `size` elements."""
    known = math.prod(s for s in shape if s != -1)
    if shape.count(-1) > 1 or any(s < -1 for s in shape):
        return False
    return known == size if -1 not in shape else known > 0 and size % known == 0


def permute(x: Tensor, *dims: Any) -> Tensor:
    """x with its dims reordered: `x.permute(2, 0, 1)` (a view)."""
    dims = sizes_arg(dims)
    if len(dims) != x.ndim or sorted(d % max(x.ndim, 1) for d in dims) != list(range(x.ndim)):
        raise RuntimeError(f"permute: dims {list(dims)} must be a permutation of the "
                           f"{x.ndim} dims of a tensor of shape {tuple(x.shape)}")
    return share_version(transpose(x, tuple(d % max(x.ndim, 1) for d in dims)), x)


def swap_dims(x: Tensor, dim0: int, dim1: int) -> Tensor:
    """x with dims dim0 and dim1 swapped (torch.transpose; NumPy's swapaxes)."""
    if x.ndim == 0:
        wrap_dim(dim0, 0, "transpose"), wrap_dim(dim1, 0, "transpose")
        return x
    d0, d1 = wrap_dim(dim0, x.ndim, "transpose"), wrap_dim(dim1, x.ndim, "transpose")
    axes = list(range(x.ndim))
    axes[d0], axes[d1] = d1, d0
    return share_version(transpose(x, tuple(axes)), x)


def t(x: Tensor) -> Tensor:
    """The transpose of a matrix; vectors and scalars come back as they are."""
    if x.ndim > 2:
        raise RuntimeError(f"t: expects a tensor with <= 2 dimensions, but got {x.ndim}-D; "
                           "use transpose(dim0, dim1) or permute")
    return swap_dims(x, 0, 1) if x.ndim == 2 else x


def movedim(x: Tensor, source: Any, destination: Any) -> Tensor:
    """Move dims from `source` to `destination` positions (ints or sequences)."""
    src = [wrap_dim(d, x.ndim, "movedim") for d in ((source,) if isinstance(source, int)
                                                        else source)]
    dst = [wrap_dim(d, x.ndim, "movedim") for d in ((destination,)
                                                    if isinstance(destination, int)
                                                    else destination)]
    perm = [d for d in range(x.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return permute(x, *perm)


def squeeze(x: Tensor, dim: Any = None) -> Tensor:
    """x without size-1 dims (only those in `dim`, an int or tuple, when given)."""
    if dim is None:
        dims = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        dims = [wrap_dim(d, x.ndim, "squeeze") for d in ((dim,) if isinstance(dim, int)
                                                         else dim)]
        dims = [d for d in dims if x.ndim and x.shape[d] == 1]
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dims)
    return x if shape == tuple(x.shape) else share_version(reshape(x, shape), x)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    """x with a size-1 dim inserted at `dim` (-1 appends)."""
    d = wrap_dim(dim, x.ndim + 1, "unsqueeze")
    shape = tuple(x.shape)
    return share_version(reshape(x, shape[:d] + (1,) + shape[d:]), x)


def unflatten(x: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Split dim `dim` into `sizes` (one may be -1)."""
    d = wrap_dim(dim, x.ndim, "unflatten")
    shape = tuple(x.shape)
    return reshape(x, shape[:d] + tuple(sizes) + shape[d + 1:])


def expand(x: Tensor, *sizes: Any) -> Tensor:
    """x broadcast to `sizes` (-1 keeps a dim; new dims go in front), without copying."""
    sizes = sizes_arg(sizes)
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be "
                           f"greater or equal to the number of dimensions ({x.ndim})")
    shape = tuple(x.shape[i - lead] if s == -1 and i >= lead else s
                  for i, s in enumerate(sizes))
    for i in range(x.ndim):
        if x.shape[i] not in (1, shape[i + lead]):
            raise RuntimeError(
                f"expand: the expanded size of the tensor ({shape[i + lead]}) must match the "
                f"existing size ({x.shape[i]}) at non-singleton dimension {i + lead}; "
                f"target sizes {list(sizes)}, tensor sizes {list(x.shape)}")
    return x if shape == tuple(x.shape) else broadcast_to(x, shape)


def cat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along an existing dim (torch.cat; also `concat`, `concatenate`).

    Tensors of different dtypes are promoted, as in PyTorch; a 1-D empty tensor is skipped.

    Examples:
        >>> lm.cat([lm.zeros(2, 3), lm.ones(1, 3)]).shape
        lamina.Size([3, 3])
    """
    dim = axis if axis is not None else dim
    tensors = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or list(tensors)
    if not tensors:
        raise RuntimeError("cat: expected a non-empty list of Tensors")
    ndim = tensors[0].ndim
    if ndim == 0:
        raise RuntimeError("cat: zero-dimensional tensor cannot be concatenated; use stack")
    return concat(promote_all(tensors), wrap_dim(dim, ndim, "cat"))


def stack(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join same-shaped tensors along a new dim.

    Examples:
        >>> lm.stack([lm.zeros(2), lm.ones(2)]).shape
        lamina.Size([2, 2])
    """
    dim = axis if axis is not None else dim
    if not tensors:
        raise RuntimeError("stack: expects a non-empty TensorList")
    return _stack(promote_all(list(tensors)),
                  wrap_dim(dim, tensors[0].ndim + 1, "stack"))


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along dim 1 (dim 0 for 1-D tensors).

    Examples:
        >>> lm.hstack([lm.zeros(2, 1), lm.ones(2, 2)]).shape
        lamina.Size([2, 3])
    """
    tensors = [atleast_1d(t) for t in tensors]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """Join along dim 0, 1-D tensors taken as rows.

    Examples:
        >>> lm.vstack([lm.zeros(2), lm.ones(2)])
        tensor([[0., 0.],
                [1., 1.]])
    """
    return cat([reshape(t, (1, -1)) if t.ndim < 2 else t for t in tensors], 0)


def atleast_1d(x: Tensor) -> Tensor:
    return reshape(x, (1,)) if x.ndim == 0 else x


def contiguous(x: Tensor) -> Tensor:
    """x itself when its memory is in row-major order, else a row-major copy."""
    if x.array.flags.c_contiguous:
        return x
    return AsType(x.dtype, order="C").apply(x)
