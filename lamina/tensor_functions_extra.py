"""PyTorch's top-level functions that are not a Tensor method of the same name: grids
and combinations (meshgrid, cartesian_prod, combinations), searches (searchsorted,
bucketize, isin), distances (cdist, cosine_similarity), stacking (atleast_*d,
column_stack, row_stack, dstack, block_diag), tensordot and diagflat. Built from existing
ops, so the differentiable ones differentiate. Statistics are in
lamina.tensor_functions_stats, dtype questions in lamina.tensor_functions_dtypes."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.functions.shape import cat, stack


def _tensors(args: tuple[Any, ...]) -> list[Tensor]:
    """PyTorch's `f(a, b, c)` or `f([a, b, c])`."""
    return list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors: with "ij" (the default) the i-th output varies
    along dim i; with "xy" the first two dims swap, as in NumPy's meshgrid.

    Examples:
        >>> gx, gy = lm.meshgrid(lm.tensor([1, 2]), lm.tensor([3, 4, 5]), indexing="ij")
        >>> gx.shape, gy[0].tolist()
        (lamina.Size([2, 3]), [3, 4, 5])
    """
    ts = [t.reshape(-1) for t in _tensors(tensors)]
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy'; got {indexing!r}")
    if indexing == "xy" and len(ts) >= 2:
        first, second, *rest = meshgrid(ts[1], ts[0], *ts[2:], indexing="ij")
        return (second, first, *rest)
    sizes = [len(t) for t in ts]
    return tuple(t.reshape([-1 if j == i else 1 for j in range(len(ts))]).expand(*sizes)
                 for i, t in enumerate(ts))


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D tensor, as rows (N, k); one tensor
    gives itself.

    Examples:
        >>> lm.cartesian_prod(lm.tensor([1, 2]), lm.tensor([3, 4])).tolist()
        [[1, 3], [1, 4], [2, 3], [2, 4]]
    """
    ts = _tensors(tensors)
    if len(ts) == 1:
        return ts[0]
    return stack([g.reshape(-1) for g in meshgrid(*ts, indexing="ij")], 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:  # noqa: A002
    """The r-length combinations of a 1-D tensor's elements, as rows, in itertools' order.

    Examples:
        >>> lm.combinations(lm.tensor([1, 2, 3])).tolist()
        [[1, 2], [1, 3], [2, 3]]
    """
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    index = np.array(list(pick(range(len(input)), r)), np.int64).reshape(-1, r)
    return input[as_tensor(index)]


def searchsorted(sorted_sequence: Tensor, values: Any, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Any = None) -> Tensor:
    """Where each value would go in the sorted last dim of `sorted_sequence` to keep it
    sorted (after equal elements with `right` or side="right").

    Examples:
        >>> lm.searchsorted(lm.tensor([1, 3, 5]), lm.tensor([3, 6]))
        tensor([1, 3])
    """
    seq = np.asarray(getattr(sorted_sequence, "array", sorted_sequence))
    vals = np.asarray(getattr(values, "array", values))
    if sorter is not None:
        seq = np.take_along_axis(seq, np.asarray(getattr(sorter, "array", sorter)), -1)
    side = side or ("right" if right else "left")
    if seq.ndim == 1:
        out = np.searchsorted(seq, vals, side)
    else:
        if seq.shape[:-1] != vals.shape[:-1]:
            raise RuntimeError(f"searchsorted: the leading dims of sorted_sequence "
                               f"{tuple(seq.shape)} and values {tuple(vals.shape)} must match")
        flat_seq, flat_vals = seq.reshape(-1, seq.shape[-1]), vals.reshape(-1, vals.shape[-1])
        out = np.stack([np.searchsorted(s, v, side) for s, v in zip(flat_seq, flat_vals)]
                       ).reshape(vals.shape)
    return as_tensor(np.asarray(out, np.int32 if out_int32 else np.int64))


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,  # noqa: A002
              right: bool = False) -> Tensor:
    """The index of each element's bucket among the sorted 1-D `boundaries`
    (searchsorted(boundaries, input)).

    Examples:
        >>> lm.bucketize(lm.tensor([0.5, 2.0, 9.0]), lm.tensor([1.0, 2.0, 3.0]))
        tensor([0, 1, 3])
    """
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False) -> Tensor:
    """Whether each element occurs in test_elements (a bool tensor of elements' shape).

    Examples:
        >>> lm.isin(lm.tensor([1, 2, 3]), lm.tensor([2, 9]))
        tensor([False,  True, False])
    """
    a = np.asarray(getattr(elements, "array", elements))
    b = np.asarray(getattr(test_elements, "array", test_elements))
    return as_tensor(np.isin(a, b, assume_unique=assume_unique, invert=invert))


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The p-norm distance between each row of x1 (*, P, M) and each of x2 (*, R, M):
    (*, P, R). The gradient at a zero distance is zero, as PyTorch's.

    Examples:
        >>> lm.cdist(lm.tensor([[0.0, 0.0]]), lm.tensor([[3.0, 4.0], [0.0, 1.0]]))
        tensor([[5., 1.]])
    """
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: x1 and x2 must have the same last dim; got "
                           f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    return (x1.unsqueeze(-2) - x2.unsqueeze(-3)).norm(p, dim=-1)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """`nn.functional.cosine_similarity`, at top level as in PyTorch.

    Examples:
        >>> lm.cosine_similarity(lm.tensor([[1.0, 0.0]]), lm.tensor([[1.0, 1.0]]))
        tensor([0.7071])
    """
    from lamina.functions import cosine_similarity as f

    return f(x1, x2, dim, eps)


def atleast_1d(*tensors: Any) -> Any:
    """Each tensor with at least 1 dim (a 0-d one becomes (1,)); one tensor or a tuple.

    Examples:
        >>> lm.atleast_1d(lm.tensor(2.0)).shape
        lamina.Size([1])
    """
    out = tuple(t.reshape(1) if t.ndim == 0 else t for t in _tensors(tensors))
    return out[0] if len(out) == 1 else out


def atleast_2d(*tensors: Any) -> Any:
    """Each tensor with at least 2 dims (a 1-D one becomes a row).

    Examples:
        >>> lm.atleast_2d(lm.tensor([1, 2])).shape
        lamina.Size([1, 2])
    """
    out = tuple(t.reshape(1, -1) if t.ndim < 2 else t for t in _tensors(tensors))
    return out[0] if len(out) == 1 else out


def atleast_3d(*tensors: Any) -> Any:
    """Each tensor with at least 3 dims ((N,) -> (1, N, 1), (M, N) -> (M, N, 1)).

    Examples:
        >>> lm.atleast_3d(lm.zeros(2, 3)).shape
        lamina.Size([2, 3, 1])
    """
    def lift(t: Tensor) -> Tensor:
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.reshape(1, -1, 1)
        return t.unsqueeze(-1) if t.ndim == 2 else t
    out = tuple(lift(t) for t in _tensors(tensors))
    return out[0] if len(out) == 1 else out


def column_stack(tensors: Any) -> Tensor:
    """Tensors side by side as columns (1-D ones as single columns).

    Examples:
        >>> lm.column_stack([lm.tensor([1, 2]), lm.tensor([3, 4])]).tolist()
        [[1, 3], [2, 4]]
    """
    return cat([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors], 1)


def row_stack(tensors: Any) -> Tensor:
    """vstack(tensors).

    Examples:
        >>> lm.row_stack([lm.tensor([1, 2]), lm.tensor([3, 4])]).shape
        lamina.Size([2, 2])
    """
    from lamina.functions.shape import vstack

    return vstack(tensors)


def dstack(tensors: Any) -> Tensor:
    """Tensors stacked along a third dim (after atleast_3d).

    Examples:
        >>> lm.dstack([lm.zeros(2, 3), lm.ones(2, 3)]).shape
        lamina.Size([2, 3, 2])
    """
    return cat([atleast_3d(t) for t in tensors], 2)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (each made 2-D) as the blocks of a block-diagonal matrix.

    Examples:
        >>> lm.block_diag(lm.ones(1, 1), lm.ones(2, 1) * 2).tolist()
        [[1.0, 0.0], [0.0, 2.0], [0.0, 2.0]]
    """
    from lamina.creation import zeros

    blocks = [t.reshape(1, -1) if t.ndim < 2 else t for t in tensors]
    dtype = np.result_type(*[b.dtype for b in blocks])
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        parts = [zeros(r, left, dtype=dtype), b.to(dtype), zeros(r, width - left - c,
                                                                 dtype=dtype)]
        rows.append(cat(parts, 1))
        left += c
    return cat(rows, 0)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2) -> Tensor:
    """Sums of products over dims of a and b: the last `dims` of a with the first `dims`
    of b, or the dims listed as ([a's], [b's]).

    Examples:
        >>> lm.tensordot(lm.ones(2, 3), lm.ones(3, 4), dims=1).shape
        lamina.Size([2, 4])
    """
    if isinstance(dims, (int, np.integer)):
        a_axes, b_axes = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        a_axes, b_axes = ([d] if isinstance(d, int) else list(d) for d in dims)
    a_axes = [d % a.ndim for d in a_axes]
    b_axes = [d % b.ndim for d in b_axes]
    a_free = [d for d in range(a.ndim) if d not in a_axes]
    b_free = [d for d in range(b.ndim) if d not in b_axes]
    k = int(np.prod([a.shape[d] for d in a_axes], dtype=np.int64))
    left = a.permute(*a_free, *a_axes).reshape(-1, k)
    right = b.permute(*b_axes, *b_free).reshape(k, -1)
    shape = [a.shape[d] for d in a_free] + [b.shape[d] for d in b_free]
    return (left @ right).reshape(shape)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:  # noqa: A002
    """The flattened input as a matrix's diagonal (`offset` above it).

    Examples:
        >>> lm.diagflat(lm.tensor([[1, 2]])).tolist()
        [[1, 0], [0, 2]]
    """
    return input.reshape(-1).diag(offset)
