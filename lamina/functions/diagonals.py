"""Triangles and diagonals of matrices (the last two dims): tril, triu, diagonal, diag
(either way: a vector to a matrix, a matrix to its diagonal) and trace, each with its
gradient."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions.shape import wrap_dim


class Triangle(Function):
    complex_rule = "holomorphic"

    def __init__(self, k: int, lower: bool) -> None:
        self.k, self.lower = k, lower

    def forward(self, x: Any) -> Any:
        return (np.tril if self.lower else np.triu)(x, self.k)

    def backward(self, gy: Any) -> Any:
        return (np.tril if self.lower else np.triu)(gy, self.k)


def tril(x: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (above `diagonal` zeroed)."""
    if x.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return Triangle(diagonal, True).apply(x)


def triu(x: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (below `diagonal` zeroed)."""
    if x.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return Triangle(diagonal, False).apply(x)


class Diagonal(Function):
    """The diagonal `offset` of dims (a, b), moved to the last dim."""

    complex_rule = "holomorphic"

    def __init__(self, offset: int, a: int, b: int) -> None:
        self.offset, self.a, self.b = offset, a, b

    def forward(self, x: Any) -> Any:
        self.x_meta = (x.shape, x.dtype)
        return np.diagonal(x, self.offset, self.a, self.b).copy()

    def backward(self, gy: Any) -> Any:
        gx = np.zeros(*self.x_meta)
        view = np.moveaxis(gx, (self.a, self.b), (-2, -1))
        n = gy.shape[-1]
        rows = np.arange(n) + max(-self.offset, 0)
        view[..., rows, rows + self.offset] = gy
        return gx


def diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal of dims (dim1, dim2), offset above (> 0) or below (< 0) the main one,
    as the last dim of the result."""
    a, b = wrap_dim(dim1, x.ndim, "diagonal"), wrap_dim(dim2, x.ndim, "diagonal")
    if a == b:
        raise RuntimeError(f"diagonal: dimensions cannot be identical {dim1}, {dim2}")
    return Diagonal(offset, a, b).apply(x)


class DiagEmbed(Function):
    complex_rule = "holomorphic"

    def __init__(self, k: int) -> None:
        self.k = k

    def forward(self, v: Any) -> Any:
        return np.diag(v, self.k)

    def backward(self, gy: Any) -> Any:
        return np.diagonal(gy, self.k).copy()


def diag(x: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D tensor as a square matrix's diagonal, or a matrix's diagonal as a 1-D tensor."""
    if x.ndim == 1:
        return DiagEmbed(diagonal).apply(x)
    if x.ndim == 2:
        return Diagonal(diagonal, 0, 1).apply(x)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")


def trace(x: Tensor) -> Tensor:
    """The sum of a matrix's main diagonal."""
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    return diagonal(x).sum()
