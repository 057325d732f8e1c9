"""Ops that join, cut and reshape tensors: concat, stack, split, pad, flatten."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.math import reshape


class Concat(Function):
    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, *xs: Any) -> Any:
        try:
            y = np.concatenate(xs, axis=self.axis)
        except ValueError as e:
            shapes = [x.shape for x in xs]
            raise ShapeError(
                f"concat: shapes must match except along axis {self.axis}; got {shapes}"
            ) from e
        self.bounds = np.cumsum([x.shape[self.axis] for x in xs])[:-1]
        return y

    def backward(self, gy: Any) -> tuple[Any, ...]:
        return tuple(np.split(gy, self.bounds, axis=self.axis))


class Stack(Function):
    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, *xs: Any) -> Any:
        if len({x.shape for x in xs}) > 1:
            raise ShapeError(f"stack: every input must have one shape; got {[x.shape for x in xs]}")
        return np.stack(xs, axis=self.axis)

    def backward(self, gy: Any) -> tuple[Any, ...]:
        return tuple(np.moveaxis(gy, self.axis, 0))


class Split(Function):
    def __init__(self, bounds: list[int], axis: int) -> None:
        self.bounds, self.axis = bounds, axis

    def forward(self, x: Any) -> tuple[Any, ...]:
        return tuple(np.split(x, self.bounds, axis=self.axis))

    def backward(self, *gys: Any) -> Any:
        return np.concatenate(gys, axis=self.axis)


class Unbind(Function):
    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any) -> tuple[Any, ...]:
        return tuple(np.moveaxis(x, self.axis, 0))

    def backward(self, *gys: Any) -> Any:
        return np.stack(gys, axis=self.axis)


class Pad(Function):
    def __init__(self, widths: tuple[tuple[int, int], ...], value: float) -> None:
        self.widths, self.value = widths, value

    def forward(self, x: Any) -> Any:
        return np.pad(x, self.widths, constant_values=self.value)

    def backward(self, gy: Any) -> Any:
        index = tuple(slice(lo, gy.shape[i] - hi) for i, (lo, hi) in enumerate(self.widths))
        return gy[index]


def concat(xs: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis (torch.cat)."""
    if not xs:
        raise ValueError("concat: needs at least one tensor")
    return Concat(axis).apply(*xs)


def stack(xs: Sequence[Tensor], axis: int = 0) -> Tensor:
    """Join same-shaped tensors along a new axis."""
    if not xs:
        raise ValueError("stack: needs at least one tensor")
    return Stack(axis).apply(*xs)


def split(x: Tensor, split_size_or_sections: int | Sequence[int], axis: int = 0
          ) -> tuple[Tensor, ...]:
    """Cut x along `axis` with torch.split's semantics.

    Args:
        x: the tensor to cut.
        split_size_or_sections: an int gives chunks of that size (the last may be smaller);
            a list gives the size of each piece and must sum to x.shape[axis].
        axis: the axis to cut.

    Returns:
        A tuple of tensors.
    """
    n = x.shape[axis]
    if isinstance(split_size_or_sections, (int, np.integer)):
        step = int(split_size_or_sections)
        if step < 1:
            raise ValueError(f"split: split size must be >= 1; got {step}")
        sizes = [min(step, n - i) for i in range(0, n, step)]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != n:
            raise ShapeError(
                f"split: sections must sum to the axis length; expected {n}, got {sum(sizes)}"
            )
    bounds = list(np.cumsum(sizes)[:-1])
    return Split(bounds, axis).apply(x)


def unbind(x: Tensor, axis: int = 0) -> tuple[Tensor, ...]:
    """Slices of x along `axis`, with that axis removed (torch.unbind); one op for all."""
    return Unbind(axis).apply(x)


def pad(x: Tensor, pad: Sequence[int], value: float = 0.0) -> Tensor:
    """Constant padding with torch.nn.functional.pad's convention.

    Args:
        x: input of any shape.
        pad: (left, right) for the last axis, then (left, right) for the one before, and so on.
        value: the fill value.
    """
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ValueError(f"pad: expected pairs for at most {x.ndim} axes; got {tuple(pad)}")
    pairs = [(int(pad[i]), int(pad[i + 1])) for i in range(0, len(pad), 2)]
    widths = [(0, 0)] * (x.ndim - len(pairs)) + pairs[::-1]
    if min(min(p) for p in widths) < 0:
        raise ValueError(f"pad: negative padding is not supported; got {tuple(pad)}")
    return Pad(tuple(widths), value).apply(x)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge axes start_dim..end_dim into one (torch.flatten)."""
    if x.ndim == 0:
        return reshape(x, (1,))
    start, end = start_dim % x.ndim, end_dim % x.ndim
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = x.shape[:start] + (-1,) + x.shape[end + 1:]
    if x.size == 0:
        shape = x.shape[:start] + (int(np.prod(x.shape[start:end + 1])),) + x.shape[end + 1:]
    return reshape(x, shape)
