"""PyTorch's ops that repeat a tensor, cut it into pieces or reorder it along dims:
repeat, repeat_interleave, narrow, chunk, split, flip and roll. `Tile`,
`RepeatInterleave` and `Roll` have gradients of their own; the rest are views
(getitem, split) that share the input's version counter, as PyTorch's do."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions.array import getitem, reshape, split
from lamina.functions.shape import share_version, sizes_arg, wrap_dim


class Tile(Function):
    complex_rule = "holomorphic"

    def __init__(self, reps: tuple[int, ...]) -> None:
        self.reps = reps

    def forward(self, x: Any) -> Any:
        self.x_shape = x.shape
        return np.tile(x, self.reps)

    def backward(self, gy: Any) -> Any:
        # gy's dim i holds reps[i] copies of x's dim i: split each and sum the copies
        split_shape = []
        for r, s in zip(self.reps, self.x_shape):
            split_shape += [r, s]
        g = gy.reshape(split_shape).sum(axis=tuple(range(0, len(split_shape), 2)))
        return g.astype(gy.dtype, copy=False)


def repeat(x: Tensor, *sizes: Any) -> Tensor:
    """x tiled `sizes` times along each dim (torch's repeat is NumPy's tile)."""
    sizes = sizes_arg(sizes)
    if len(sizes) < x.ndim:
        raise RuntimeError(f"repeat: number of dimensions of repeat dims ({len(sizes)}) can "
                           f"not be smaller than number of dimensions of tensor ({x.ndim})")
    x = reshape(x, (1,) * (len(sizes) - x.ndim) + tuple(x.shape))
    return Tile(sizes).apply(x)


class RepeatInterleave(Function):
    complex_rule = "holomorphic"

    def __init__(self, repeats: Any, axis: int) -> None:
        self.repeats, self.axis = repeats, axis

    def forward(self, x: Any) -> Any:
        self.x_meta = (x.shape, x.dtype)
        return np.repeat(x, self.repeats, axis=self.axis)

    def backward(self, gy: Any) -> Any:
        shape, dtype = self.x_meta
        owner = np.repeat(np.arange(shape[self.axis]), self.repeats)
        gx = np.zeros(shape, dtype)
        np.add.at(np.moveaxis(gx, self.axis, 0), owner, np.moveaxis(gy, self.axis, 0))
        return gx


def repeat_interleave(x: Tensor, repeats: Any, dim: int | None = None,
                      output_size: int | None = None) -> Tensor:
    """Each element (or slice along `dim`) repeated `repeats` times, in place order.

    Examples:
        >>> lm.tensor([1, 2]).repeat_interleave(2)
        tensor([1, 1, 2, 2])
    """
    if dim is None:
        x, dim = reshape(x, (-1,)), 0
    reps = repeats.array if isinstance(repeats, Tensor) else repeats
    return RepeatInterleave(reps, wrap_dim(dim, x.ndim, "repeat_interleave")).apply(x)


def narrow(x: Tensor, dim: int, start: int, length: int) -> Tensor:
    """The slice start:start+length of dim `dim` (a view)."""
    d = wrap_dim(dim, x.ndim, "narrow")
    start = int(start) + (x.shape[d] if start < 0 else 0)
    if not 0 <= start <= start + length <= x.shape[d]:
        raise IndexError(f"narrow: start ({start}) + length ({length}) exceeds dimension "
                         f"size ({x.shape[d]}) of dim {dim}")
    key = (slice(None),) * d + (slice(start, start + length),)
    return share_version(getitem(x, key), x)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """x cut into `chunks` pieces of ceil(size / chunks) along dim (the last may be smaller,
    and there may be fewer pieces, as in PyTorch)."""
    if chunks < 1:
        raise RuntimeError(f"chunk: chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, x.ndim, "chunk")
    size = max(-(-x.shape[d] // chunks), 1)
    return split_(x, size, d)


def split_(x: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.split: pieces of one size (the last may be smaller) or of the listed sizes."""
    d = wrap_dim(dim, x.ndim, "split")
    if isinstance(split_size_or_sections, (int, np.integer)) and x.shape[d] == 0:
        return (x,)
    pieces = split(x, split_size_or_sections, d)
    return tuple(share_version(p, x) for p in pieces)


def flip(x: Tensor, *dims: Any) -> Tensor:
    """x with the order of elements reversed along `dims`."""
    dims = sizes_arg(dims)
    key = [slice(None)] * x.ndim
    for d in dims:
        key[wrap_dim(d, x.ndim, "flip")] = slice(None, None, -1)
    return getitem(x, tuple(key)) if x.ndim else x


class Roll(Function):
    complex_rule = "holomorphic"

    def __init__(self, shifts: tuple[int, ...], axes: tuple[int, ...] | None) -> None:
        self.shifts, self.axes = shifts, axes

    def forward(self, x: Any) -> Any:
        return np.roll(x, self.shifts, self.axes)

    def backward(self, gy: Any) -> Any:
        return np.roll(gy, tuple(-s for s in self.shifts), self.axes)


def roll(x: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    """x with elements shifted `shifts` places along `dims` (all elements, flattened order,
    when dims is None), wrapping around."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        return reshape(Roll(shifts, None).apply(reshape(x, (-1,))), tuple(x.shape))
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(dims) != len(shifts):
        raise RuntimeError(f"roll: shifts and dimensions must align; shifts: {len(shifts)}, "
                           f"dims: {len(dims)}")
    return Roll(shifts, tuple(wrap_dim(d, x.ndim, "roll") for d in dims)).apply(x)
