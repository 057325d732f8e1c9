"""`lamina.linalg`, as `torch.linalg`: norms (`norm`, `vector_norm`, `matrix_norm`),
`inv`, `solve`, `det`, `svdvals`, the factorizations (`cholesky`, `eigh`, `svd`, `qr`;
factorizations.py; the LU family, lu.py) and what is built on them (`pinv`, `lstsq`,
`matrix_exp`, `cond`, ...; derived.py), and the matrix products under their linalg names.
All of them differentiate, on single matrices and on stacks of them.

    >>> lm.linalg.norm(lm.tensor([3.0, 4.0]))
    tensor(5.)
"""

from __future__ import annotations

from typing import Any

from lamina import return_types
from lamina.autograd.tensor import Tensor
from lamina.functions.decomposition import Det, Inv, LinAlgError, Slogdet, Solve, Svdvals
from lamina.functions.reduction import norm as _vector_norm
from lamina.functions.shape import stack, wrap_dim
from lamina.linalg.derived import *  # noqa: F403
from lamina.linalg.derived import __all__ as _derived
from lamina.linalg.factorizations import *  # noqa: F403
from lamina.linalg.factorizations import __all__ as _factorizations
from lamina.linalg.lu import lu, lu_factor, lu_factor_ex, lu_solve

__all__ = ["LinAlgError", "cross", "det", "inv", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_norm", "norm", "slogdet", "solve", "svdvals", "vecdot",
           "vector_norm", *_factorizations, *_derived]


def vector_norm(x: Tensor, ord: Any = 2, dim: Any = None, keepdim: bool = False, *,
                dtype: Any = None) -> Tensor:
    """The `ord`-norm of x's elements over `dim` (all of them by default): 2, 1, any other
    number, inf (the largest magnitude), -inf (the smallest) or 0 (the count of non-zeros).

    Examples:
        >>> lm.linalg.vector_norm(lm.tensor([[3.0, 4.0]]), dim=1)
        tensor([5.])
    """
    return _vector_norm(x, ord, dim, keepdim, dtype=dtype)


def matrix_norm(A: Tensor, ord: Any = "fro", dim: tuple[int, int] = (-2, -1),
                keepdim: bool = False, *, dtype: Any = None) -> Tensor:
    """A matrix norm over the two dims `dim`: "fro" (Frobenius), "nuc" (the sum of the
    singular values), 2 / -2 (the largest / smallest singular value), 1 / -1 (the largest /
    smallest column sum of magnitudes), inf / -inf (the same over rows).

    Raises:
        ValueError: another ord, or dim not two distinct dims.

    Examples:
        >>> lm.linalg.matrix_norm(lm.eye(3), "nuc")
        tensor(3.)
    """
    if dtype is not None:
        A = A.to(dtype)
    if len(dim) != 2 or wrap_dim(dim[0], A.ndim, "matrix_norm") == wrap_dim(
            dim[1], A.ndim, "matrix_norm"):
        raise ValueError(f"linalg.matrix_norm: dim must be two distinct dims; got {dim}")
    rows, cols = (wrap_dim(d, A.ndim, "matrix_norm") for d in dim)
    if ord == "fro":
        return _vector_norm(A, 2, (rows, cols), keepdim)
    if ord in ("nuc", 2, -2):
        moved = A.movedim((rows, cols), (-2, -1))
        s = Svdvals().apply(moved)
        out = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            out = out.unsqueeze(min(rows, cols)).unsqueeze(max(rows, cols))
        return out
    if ord in (1, -1, float("inf"), float("-inf")):
        summed, over = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = A.abs().sum(summed, keepdim=True)
        out = sums.amax(over, keepdim=True) if ord > 0 else sums.amin(over, keepdim=True)
        return out if keepdim else out.squeeze((rows, cols))
    raise ValueError(f"linalg.matrix_norm: ord must be 'fro', 'nuc', 2, -2, 1, -1, inf or "
                     f"-inf; got {ord!r}")


def norm(A: Tensor, ord: Any = None, dim: Any = None, keepdim: bool = False, *,
         dtype: Any = None) -> Tensor:
    """A vector norm where `dim` is one dim (or A is 1-D), a matrix norm where `dim` is two
    dims (or A is 2-D and ord is given); with neither ord nor dim, the 2-norm of all of A's
    elements, as PyTorch's.

    Raises:
        RuntimeError: ord given without dim for A of more than 2 dims.

    Examples:
        >>> lm.linalg.norm(lm.tensor([[1.0, -2.0], [3.0, -4.0]]), float("inf"))
        tensor(7.)
    """
    if isinstance(dim, int) or (isinstance(dim, (tuple, list)) and len(dim) == 1):
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is not None:
        return matrix_norm(A, "fro" if ord is None else ord, tuple(dim), keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: with ord={ord!r} and no dim, A must be 1-D or 2-D; "
                       f"got {A.ndim}-D (give dim)")


def inv(A: Tensor) -> Tensor:
    """The inverse of a square matrix (or of each in a stack).

    Raises:
        LinAlgError: A is singular.

    Examples:
        >>> lm.linalg.inv(lm.tensor([[2.0, 0.0], [0.0, 4.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.2500]])
    """
    return Inv().apply(A)


def det(A: Tensor) -> Tensor:
    """The determinant of a square matrix (or of each in a stack); its gradient is the
    adjugate's, so a singular matrix has one too.

    Examples:
        >>> lm.linalg.det(lm.tensor([[2.0, 1.0], [0.0, 3.0]]))
        tensor(6.)
    """
    return Det().apply(A)


def slogdet(A: Tensor) -> Any:
    """(sign, logabsdet) of the determinant, a named tuple: log|det A| without the
    overflow of det itself. The gradient flows through logabsdet.

    Examples:
        >>> lm.linalg.slogdet(lm.tensor([[-2.0, 0.0], [0.0, 3.0]])).sign
        tensor(-1.)
    """
    sign, logabsdet = Slogdet().apply(A)
    return return_types.linalg_slogdet(sign, logabsdet)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with A X = B (X A = B where left=False); B a matrix (*, n, k) or a vector (*, n).

    Raises:
        LinAlgError: A is singular.

    Examples:
        >>> lm.linalg.solve(lm.tensor([[2.0, 0.0], [0.0, 4.0]]), lm.tensor([1.0, 1.0]))
        tensor([0.5000, 0.2500])
    """
    if not left:
        return solve(A.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        return Solve().apply(A, B.unsqueeze(-1)).squeeze(-1)
    return Solve().apply(A, B)


def svdvals(A: Tensor) -> Tensor:
    """The singular values of A (*, m, n), largest first.

    Examples:
        >>> lm.linalg.svdvals(lm.tensor([[3.0, 0.0], [0.0, -5.0]]))
        tensor([5., 3.])
    """
    return Svdvals().apply(A)


def matmul(A: Tensor, B: Tensor) -> Tensor:
    """A @ B, as `lamina.matmul`.

    Examples:
        >>> lm.linalg.matmul(lm.eye(2), lm.ones(2, 1)).shape
        lamina.Size([2, 1])
    """
    return A @ B


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of x and y along `dim` (broadcast elsewhere).

    Examples:
        >>> lm.linalg.vecdot(lm.tensor([1.0, 2.0]), lm.tensor([3.0, 4.0]))
        tensor(11.)
    """
    return (x * y).sum(dim)


def cross(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along `dim`.

    Examples:
        >>> lm.linalg.cross(lm.tensor([1.0, 0.0, 0.0]), lm.tensor([0.0, 1.0, 0.0]))
        tensor([0., 0., 1.])
    """
    xs, ys = x.unbind(dim), y.unbind(dim)
    if len(xs) != 3 or len(ys) != 3:
        raise ValueError(f"linalg.cross: dim {dim} must have size 3; got shapes "
                         f"{tuple(x.shape)} and {tuple(y.shape)}")
    parts = [xs[1] * ys[2] - xs[2] * ys[1], xs[2] * ys[0] - xs[0] * ys[2],
             xs[0] * ys[1] - xs[1] * ys[0]]
    return stack(parts, dim)
