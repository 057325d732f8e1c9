"""Ops that reshape, index, join and cut tensors: reshape, transpose, broadcast_to,
getitem, concat, stack, split, unbind, flatten. Padding is lamina.functions.padding's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina import state
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import sum_to


class Reshape(Function):
    complex_rule = "holomorphic"

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def forward(self, x: Any) -> Any:
        self.x_shape = x.shape
        try:
            return x.reshape(self.shape)
        except ValueError:
            raise ShapeError(
                f"reshape: cannot reshape {x.shape} ({x.size} elements) to {self.shape}"
            ) from None

    def backward(self, gy: Any) -> Any:
        return gy.reshape(self.x_shape)


class Transpose(Function):
    complex_rule = "holomorphic"

    def __init__(self, axes: tuple[int, ...] | None) -> None:
        self.axes = axes

    def forward(self, x: Any) -> Any:
        return np.transpose(x, self.axes)

    def backward(self, gy: Any) -> Any:
        if self.axes is None:
            return np.transpose(gy)
        return np.transpose(gy, np.argsort(self.axes))


class BroadcastTo(Function):
    complex_rule = "holomorphic"

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape

    def forward(self, x: Any) -> Any:
        self.x_shape = x.shape
        return np.broadcast_to(x, self.shape)

    def backward(self, gy: Any) -> Any:
        return sum_to(gy, self.x_shape)


class GetItem(Function):
    """x[key]. Tensors in the key (integer or boolean index arrays) are inputs of the op,
    not constants, so that a plan reads them from every batch: `template` holds the key
    with None in their places, `slots` where they go."""

    complex_rule = "holomorphic"

    def __init__(self, template: Any, slots: tuple[int, ...] = (), is_tuple: bool = False
                 ) -> None:
        self.template, self.slots, self.is_tuple = template, slots, is_tuple

    def forward(self, x: Any, *indices: Any) -> Any:
        self.x_meta = (x.shape, x.dtype)
        self.save_for_backward(*indices)
        return x[self._key(indices)]

    def _key(self, indices: tuple[Any, ...]) -> Any:
        if not self.slots:
            return self.template
        if not self.is_tuple:
            return indices[0]
        key = list(self.template)
        for slot, index in zip(self.slots, indices):
            key[slot] = index
        return tuple(key)

    def backward(self, gy: Any) -> Any:
        gx, key = np.zeros(*self.x_meta), self._key(self.saved_tensors)
        if _is_basic_index(key):
            gx[key] = gy
        else:  # integer arrays may repeat an index: add.at sums every occurrence
            np.add.at(gx, key, gy)
        return (gx, *[None] * len(self.slots))


def _is_basic_index(key: Any) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice)) for k in keys)


def _plain_key(key: Any) -> Any:
    """A key holding no Tensor (getitem passes those as inputs), a list made an array."""
    return np.asarray(key) if isinstance(key, list) else key


def reshape(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A view of x with a new shape (one axis may be -1)."""
    return Reshape(tuple(shape)).apply(x)


def transpose(x: Tensor, axes: tuple[int, ...] | None = None) -> Tensor:
    """Permute axes (None reverses them)."""
    return Transpose(tuple(axes) if axes is not None else None).apply(x)


def broadcast_to(x: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Broadcast x to `shape`; the gradient is summed back."""
    return BroadcastTo(tuple(shape)).apply(x)


def getitem(x: Tensor, key: Any) -> Tensor:
    """x[key] for slices, integer arrays and boolean masks, with gradient."""
    parts = key if isinstance(key, tuple) else (key,)
    slots = tuple(i for i, k in enumerate(parts) if isinstance(k, Tensor))
    if not slots:
        return GetItem(_plain_key(key)).apply(x)
    indices = [parts[i] for i in slots]
    if state.tracer is not None:
        for index in indices:
            if index.dtype == bool:
                state.tracer.shaped_by_data(index, "indexing with a boolean tensor")
    template = tuple(None if i in slots else k for i, k in enumerate(parts))
    return GetItem(template, slots, isinstance(key, tuple)).apply(x, *indices)


class Concat(Function):
    complex_rule = "holomorphic"

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
    complex_rule = "holomorphic"

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, *xs: Any) -> Any:
        if len({x.shape for x in xs}) > 1:
            raise ShapeError(f"stack: every input must have one shape; got {[x.shape for x in xs]}")
        return np.stack(xs, axis=self.axis)

    def backward(self, gy: Any) -> tuple[Any, ...]:
        return tuple(np.moveaxis(gy, self.axis, 0))


class Split(Function):
    complex_rule = "holomorphic"

    def __init__(self, bounds: list[int], axis: int) -> None:
        self.bounds, self.axis = bounds, axis

    def forward(self, x: Any) -> tuple[Any, ...]:
        return tuple(np.split(x, self.bounds, axis=self.axis))

    def backward(self, *gys: Any) -> Any:
        return np.concatenate(gys, axis=self.axis)


class Unbind(Function):
    complex_rule = "holomorphic"

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any) -> tuple[Any, ...]:
        return tuple(np.moveaxis(x, self.axis, 0))

    def backward(self, *gys: Any) -> Any:
        return np.stack(gys, axis=self.axis)


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


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge axes start_dim..end_dim into one (torch.flatten)."""
    if x.ndim == 0:
        return reshape(x, (1,))
    start, end = start_dim % x.ndim, end_dim % x.ndim
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = x.shape[:start] + (-1,) + x.shape[end + 1:]
    if x.numel() == 0:
        shape = x.shape[:start] + (int(np.prod(x.shape[start:end + 1])),) + x.shape[end + 1:]
    return reshape(x, shape)
