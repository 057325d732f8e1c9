"""Helpers shared by the op modules: undo broadcasting, wrap constants, normalise axes."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor


def sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """Sum a broadcast gradient back to `shape` (the one place broadcasting is undone)."""
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and g.shape[i + lead] != 1
    )
    g = g.sum(axis=axes, keepdims=True) if axes else g
    return g.reshape(shape) if lead else g


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
