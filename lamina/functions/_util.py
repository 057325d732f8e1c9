"""Helpers shared by the op modules: undo broadcasting, wrap constants, normalise axes, lay
out memory."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from lamina import allocator, fused
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.fused.mkl_blas import matmul


def sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a broadcast gradient back to `shape` (the one place broadcasting is undone)."""
    if g.shape == shape:
        return g
    lead, axes = broadcast_axes(g.shape, shape)
    g = g.sum(axis=axes, keepdims=True) if axes else g
    return g.reshape(shape) if lead else g


def broadcast_axes(big: tuple[int, ...], shape: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """(how many leading axes broadcasting added, the axes to sum) to take a gradient of
    shape `big` back to `shape`: sum_to's, and the recorded one's of create_graph."""
    lead = len(big) - len(shape)
    return lead, tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and big[i + lead] != 1)


def unbatched(nd: int, hint: Callable[..., str] | None = None
              ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Let an op on (N, C, *nd spatial dims) inputs take one sample, (C, *spatial), as
    PyTorch's convolutions and poolings do: a batch dim put on before, taken off every
    result (values and indices) after. A shape error says how the input was read, then
    `hint(input, *args, **kwargs)`'s words (what the input may have meant instead)."""
    def wrap(op: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(op)
        def call(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
            if getattr(input, "ndim", None) != nd + 1:
                return op(input, *args, **kwargs)
            try:
                out = op(input.unsqueeze(0), *args, **kwargs)
            except ShapeError as e:
                more = hint(input, *args, **kwargs) if hint is not None else ""
                raise ShapeError(f"{e}; the input {tuple(input.shape)} was read as one "
                                 f"sample without a batch dim{more}") from None
            if isinstance(out, tuple):
                return type(out)(*(o.squeeze(0) for o in out)) if hasattr(out, "_fields") \
                    else tuple(o.squeeze(0) for o in out)
            return out.squeeze(0)
        return call
    return wrap


def as_tensor(value: Any, like: Tensor | None = None) -> Tensor:
    """Wrap a constant as a Tensor; a Python number takes the dtype of the tensor beside it."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (int, float, bool)) and like is not None:
        dtype = like.array.dtype
        if isinstance(value, float) and dtype.kind not in "fc":
            dtype = np.float32
        return Tensor(np.asarray(value, dtype=dtype))
    return Tensor(np.asarray(value))


def normalize_axis(axis: Any, ndim: int) -> tuple[int, ...]:
    """`axis` (None, int or sequence, negatives allowed) as a sorted tuple of positive axes."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of range for a tensor of {ndim} dimensions")
        out.append(int(a) % max(ndim, 1))
    return tuple(sorted(out))


def expand_reduced(g: Any, shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> Any:
    """Re-insert reduced axes into `g` so it broadcasts against an input of `shape`."""
    if not keepdims and axes:
        g = np.expand_dims(g, axes)
    return g


def pair(value: Any, name: str, op: str, n: int = 2) -> tuple[int, ...]:
    """An int or an n-sequence of ints, as an n-tuple (kernel size, stride, padding...)."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    value = tuple(int(v) for v in value)
    if len(value) != n:
        raise ValueError(f"{op}: {name} must be an int or {n} ints; got {value}")
    return value


def axis_order(a: Any) -> list[int]:
    """a's axes from the largest stride to the smallest: the order its memory runs in."""
    return sorted(range(a.ndim), key=lambda i: -abs(a.strides[i]))


def in_order(memory: Any, shape: tuple[int, ...], order: list[int]) -> Any:
    """The flat array `memory` viewed as `shape`, its axes stored in `order` (axis_order)."""
    stored = memory.reshape([shape[a] for a in order])
    return stored.transpose([order.index(a) for a in range(len(shape))])


def laid_out_like(memory: Any, like: Any) -> Any:
    """`memory` (an array of like's size) viewed as like's shape in like's axis order, as
    NumPy's order="K" would allocate: a result written there keeps its input's layout (a
    convolution's channel-major output stays channel-major), and one written over its own
    input lines up element for element."""
    if like.ndim < 2 or like.flags.c_contiguous:
        return memory.reshape(like.shape)
    return in_order(memory.reshape(-1), like.shape, axis_order(like))


# Rows of x for which gemm_rows computes x @ W.T as (W @ x.T).T. On a few rows, OpenBLAS's
# GEMM with the transposed weight on the right runs 1.2-3x slower than the same product
# with the operands swapped, plus a transposing copy; from about a hundred rows on, the
# swap is the slower (benchmarks/RESULTS.md, 2026-11-27 session 40). One row is a GEMV
# either way.
SWAP_ROWS = (2, 64)


def gemm_rows(x: Any, m: Any, out: Any = None, add: Any = None) -> Any:
    """x (..., K) @ m (K, N) (+ add, a row broadcast over the result's rows) as one GEMM
    over x's rows laid end to end, shaped (..., N).

    np.matmul runs a stacked x as one GEMM per leading index: many small products, about
    2.5x slower than one large one for an LSTM's (T, B, K) inputs. The flat view costs
    nothing where x is contiguous, and one copy where it is not. m transposed (a linear
    layer's W.T) on a few rows: fused.row_product where it runs, else see SWAP_ROWS; the
    copy back adds `add` in its pass.
    """
    k, n = m.shape
    rows = x.size // k if k else 0
    contiguous_out = out is None or out.flags.c_contiguous
    if rows <= fused.few_rows.ROWS and m.flags.f_contiguous and contiguous_out:
        y = fused.row_product(x.reshape(rows, k), m.T, add,
                              None if out is None else out.reshape(rows, n))
        if y is not None:
            return y.reshape(*x.shape[:-1], n)
    if SWAP_ROWS[0] <= rows <= SWAP_ROWS[1] and m.flags.f_contiguous and contiguous_out:
        swapped = matmul(m.T, x.reshape(rows, k).T)  # (N, rows)
        y = np.empty((rows, n), swapped.dtype) if out is None else out.reshape(rows, n)
        if add is None:
            np.copyto(y, swapped.T)
        else:
            np.add(swapped.T, add, out=y)
        return y.reshape(*x.shape[:-1], n)
    if x.ndim <= 2 or not contiguous_out:
        y = (matmul if x.ndim == 2 else np.matmul)(x, m, out=out)
        if add is not None:
            fused.add_row(y, add)  # NumPy's pass where y is not a 2-D float32 array
        return y
    flat = matmul(x.reshape(-1, k), m, out=None if out is None else out.reshape(-1, n))
    if add is not None:
        fused.add_row(flat, add)
    return flat.reshape(*x.shape[:-1], n)


def column_sums(a: Any) -> Any:
    """The sum over the rows of a 2-D array (a bias's gradient), as a product with a row of
    ones: BLAS's GEMV reads the rows once at full bandwidth, about twice as fast as
    NumPy's sum(axis=0). See row_sums for the warning it does not give."""
    if a.dtype.kind != "f":
        return a.sum(axis=0)
    with np.errstate(invalid="ignore"):
        return np.ones(len(a), a.dtype) @ a


def row_sums(a: Any) -> Any:
    """Sums along the last axis, as a product with ones (BLAS's GEMV: several times
    NumPy's sum). Without NumPy's invalid-value warning: OpenBLAS's kernels can raise the
    flag on finite input (lanes past the end), and a NaN still gives a NaN sum, unwarned
    as in PyTorch."""
    if a.dtype.kind != "f":
        return a.sum(axis=-1)
    with np.errstate(invalid="ignore"):
        return a @ np.ones(a.shape[-1], a.dtype)


def pooled_matmul(a: Any, b: Any) -> Any:
    """a @ b, a stack of products where either is; the result from allocator.empty, so a
    product past malloc's mmap threshold (attention's scores at long contexts) reuses a
    block instead of mapping fresh pages, whose faults cost about as much as the pass
    that fills them."""
    if a.ndim < 2 or b.ndim < 2:
        return a @ b
    # The result's size from the larger stack (a lower bound where the two broadcast
    # against each other), in plain integers: most products are far below the threshold,
    # and NumPy's shape and dtype arithmetic would cost as much as they do.
    rows, cols = a.shape[-2], b.shape[-1]
    stack = max(a.size // max(rows * a.shape[-1], 1), b.size // max(b.shape[-2] * cols, 1))
    if stack * rows * cols * max(a.itemsize, b.itemsize) < allocator.MMAP_THRESHOLD:
        return matmul(a, b)
    shape = (*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), rows, cols)
    return matmul(a, b, out=allocator.empty(shape, np.result_type(a, b)))


def first_max(planes: list[Any], y: Any) -> Any:
    """Per element, the index of the plane PyTorch's max pooling picks: the first equal to
    the maximum y, or the last NaN where y is NaN; in y's memory order. By arithmetic on
    "plane k is not the max" masks e_k, idx = e0 * (1 + e1 * (1 + e2 * (...))): several
    times faster than an argmax over copied windows."""
    idx = np.zeros_like(y, np.uint8 if len(planes) < 256 else np.int32)
    for plane in reversed(planes[:-1]):
        idx += 1
        idx *= plane != y
    if y.dtype.kind == "f" and np.isnan(y).any():  # NaN equals no plane: placed here
        for k, plane in enumerate(planes):
            idx[np.isnan(plane)] = k
    return idx


def floating(x: Any) -> Any:
    """Integers as float64: statistics cast to an integer dtype would truncate to 0."""
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def wants(need: tuple[bool, ...], i: int) -> bool:
    """Whether input i was given and takes a gradient (an optional weight or bias)."""
    return len(need) > i and need[i]


def row_dots(a: Any, b: Any) -> Any:
    """Dot products of a's and b's rows along the last axis."""
    return np.matmul(a[..., None, :], b[..., :, None])[..., 0, 0]


def channel_plane(per_channel: Any, like: Any) -> Any:
    """A (C,) vector laid out as a (C, positions) plane that broadcasts against (N, C,
    positions) along whole samples."""
    return np.broadcast_to(per_channel.astype(like.dtype, copy=False)[:, None],
                           like.shape[1:]).copy()
