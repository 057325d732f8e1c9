"""lamina.linalg's functions built from the others: multi_dot, matrix_power, diagonal,
vander, cond, tensorinv and tensorsolve."""

from __future__ import annotations

import math
from typing import Any

from lamina.autograd.tensor import Tensor


def multi_dot(tensors: Any) -> Tensor:
    """The product of the matrices in order; a 1-D first is a row, a 1-D last a column,
    and those dims leave the result, as PyTorch's.

    Examples:
        >>> lm.linalg.multi_dot([lm.ones(3), lm.ones(3, 2), lm.ones(2)])
        tensor(6.)
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError("linalg.multi_dot: expected at least 2 tensors; got "
                           f"{len(tensors)}")
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    if first:
        tensors[0] = tensors[0].unsqueeze(0)
    if last:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    if first:
        out = out.squeeze(0)
    return out.squeeze(-1) if last else out


def matrix_power(A: Tensor, n: int) -> Tensor:
    """A to the integer power n (`Tensor.matrix_power`).

    Examples:
        >>> lm.linalg.matrix_power(lm.tensor([[1.0, 1.0], [0.0, 1.0]]), 2)
        tensor([[1., 2.],
                [0., 1.]])
    """
    return A.matrix_power(n)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of the matrices of A (over its last two dims by default).

    Examples:
        >>> lm.linalg.diagonal(lm.eye(2))
        tensor([1., 1.])
    """
    return A.diagonal(offset, dim1, dim2)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of x's last dim in increasing powers: x ** 0, ..., x ** (N-1).

    Examples:
        >>> lm.linalg.vander(lm.tensor([1.0, 2.0]))
        tensor([[1., 1.],
                [1., 2.]])
    """
    from lamina.functions.shape import stack

    n = x.shape[-1] if N is None else N
    if n < 1:
        raise RuntimeError(f"linalg.vander: N must be at least 1; got {n}")
    powers = [x.new_ones(x.shape) if k == 0 else x ** k for k in range(n)]
    return stack(powers, -1)


def cond(A: Tensor, p: Any = None) -> Tensor:
    """The condition number in the norm p: the ratio of the largest to the smallest
    singular value for None, 2 and -2 (inverted); norm(A, p) * norm(inv(A), p) for "fro",
    "nuc", inf, -inf, 1 and -1.

    Examples:
        >>> lm.linalg.cond(lm.tensor([[2.0, 0.0], [0.0, 1.0]]))
        tensor(2.)
    """
    from lamina.linalg import inv, matrix_norm, svdvals

    if p in (None, 2, -2):
        s = svdvals(A)
        ratio = s[..., 0] / s[..., -1]
        return ratio if p != -2 else 1 / ratio
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The tensor X with tensordot(A, X, ind) the identity: A's first `ind` dims against
    the rest, inverted as a square matrix.

    Examples:
        >>> lm.linalg.tensorinv(lm.eye(4).reshape(4, 2, 2), ind=1).shape
        lamina.Size([2, 2, 4])
    """
    from lamina.linalg import inv

    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError(f"linalg.tensorinv: the product of the first {ind} dims "
                           f"{rows} must equal that of the rest {cols}")
    return inv(A.reshape(math.prod(rows), -1)).reshape(*cols, *rows)


def tensorsolve(A: Tensor, B: Tensor, dims: Any = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B; `dims` of A move to the end first.

    Examples:
        >>> lm.linalg.tensorsolve(lm.eye(4).reshape(2, 2, 2, 2), lm.ones(2, 2)).shape
        lamina.Size([2, 2])
    """
    from lamina.linalg import solve

    if dims is not None:
        dims = [d % A.ndim for d in dims]
        A = A.permute(*[d for d in range(A.ndim) if d not in dims], *dims)
    rest = tuple(A.shape[B.ndim:])
    return solve(A.reshape(B.numel(), -1), B.reshape(-1)).reshape(*rest)


__all__ = ["cond", "diagonal", "matrix_power", "multi_dot", "tensorinv", "tensorsolve",
           "vander"]
