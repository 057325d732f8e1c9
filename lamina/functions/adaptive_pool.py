"""Adaptive average pooling to a given output size (1-D and 2-D), as PyTorch bins it: each
axis a product with an averaging matrix, whose transpose is the backward."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import unbatched


class AdaptiveAvgPool(Function):
    """Mean over PyTorch's adaptive bins: output cell i of an axis of n inputs averages
    inputs floor(i * n / m) to ceil((i + 1) * n / m) - 1, so bins may overlap or differ
    in length by one. Each axis is a product with an (m, n) averaging matrix, whose
    transpose is the backward; a size-1 output on every axis is a plain mean."""

    def __init__(self, nd: int, output_size: Any) -> None:
        self.nd, self.op = nd, f"adaptive_avg_pool{nd}d"
        self.sizes = output_sizes(output_size, nd, self.op)

    def forward(self, x: Any) -> Any:
        if x.ndim != self.nd + 2:
            raise ShapeError(f"{self.op}: expected input of {self.nd + 2} dims (N, C, "
                             f"{'L' if self.nd == 1 else 'H, W'}); got shape {x.shape}")
        self.x_shape = x.shape
        self.axes = tuple(range(2, x.ndim))
        outs = tuple(n if m is None else m for n, m in zip(x.shape[2:], self.sizes))
        if outs == (1,) * self.nd:
            self.mats = None
            return x.mean(axis=self.axes, keepdims=True, dtype=x.dtype)
        dtype = x.dtype if x.dtype.kind == "f" else np.float64
        # None where the output keeps the input's length: that axis is left as it is.
        self.mats = [None if m == n else bin_matrix(n, m, dtype)
                     for n, m in zip(x.shape[2:], outs)]
        if all(m is None for m in self.mats):
            return x.copy()  # never the input's own memory, which later ops may overwrite
        return along_axes(x, self.mats, self.axes)

    def backward(self, gy: Any) -> Any:
        if self.mats is None:
            count = math.prod(self.x_shape[2:])
            gx = np.empty(self.x_shape, gy.dtype)
            gx[...] = gy / gy.dtype.type(count)
            return gx
        return along_axes(gy, [None if m is None else m.T for m in self.mats], self.axes)


def output_sizes(output_size: Any, nd: int, op: str) -> tuple[int | None, ...]:
    """An adaptive pool's output_size as one size (or None: keep) per axis; a ValueError in
    `op`'s name otherwise. Layers call it at build time."""
    sizes = (output_size,) * nd if output_size is None or isinstance(output_size, int) \
        else tuple(output_size)
    if len(sizes) != nd or not all(
            m is None or (isinstance(m, (int, np.integer)) and m >= 1) for m in sizes):
        raise ValueError(f"{op}: output_size must be an int >= 1 (or None to keep the input's "
                         f"size){'' if nd == 1 else f', or a tuple of {nd} of them'}; "
                         f"got {output_size!r}")
    return tuple(None if m is None else int(m) for m in sizes)


def bin_matrix(n: int, m: int, dtype: Any) -> Any:
    """The (m, n) matrix whose row i averages bin i of n inputs (see AdaptiveAvgPool)."""
    i = np.arange(m)
    start, end = (i * n) // m, -(-(i + 1) * n // m)
    j = np.arange(n)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def along_axes(a: Any, mats: list[Any], axes: tuple[int, ...]) -> Any:
    """a with each axis in `axes` multiplied by its matrix (None: left alone); one GEMM
    per axis, over a contiguous result."""
    for axis, mat in zip(axes, mats):
        if mat is not None:
            a = np.moveaxis(np.tensordot(a, mat, axes=([axis], [1])), -1, axis)
    return np.ascontiguousarray(a)


@unbatched(1)
def adaptive_avg_pool1d(x: Tensor, output_size: int | None) -> Tensor:
    """Mean over `output_size` adaptive bins of an (N, C, L) input, as PyTorch's: bins
    cover L evenly, overlapping where L is not a multiple. 1 gives global average pooling.

    Examples:
        >>> y = F.adaptive_avg_pool1d(x, 1)     # (8, 16, 40) -> (8, 16, 1)
    """
    return AdaptiveAvgPool(1, output_size).apply(x)


@unbatched(2)
def adaptive_avg_pool2d(x: Tensor, output_size: Any) -> Tensor:
    """Mean over adaptive bins of an (N, C, H, W) input to (N, C, *output_size), as
    PyTorch's. output_size is an int, or (h, w) where None keeps that axis's length.

    Examples:
        >>> y = F.adaptive_avg_pool2d(x, 1)     # global average: (8, 64, 7, 7) -> (8, 64, 1, 1)
    """
    return AdaptiveAvgPool(2, output_size).apply(x)
