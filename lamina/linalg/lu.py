"""The LU family, as torch.linalg's: `lu_factor`, `lu_factor_ex`, `lu`, `lu_solve`, and
torch's `lu_unpack`, with their gradients (lamina.functions.lu: the factorization of
square matrices differentiates; `lu_solve` differentiates through its triangular solves).
Only with partial pivoting, as PyTorch's on the CPU."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import return_types
from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.errors import ShapeError
from lamina.functions.lu import LUFactor, permutation

__all__ = ["lu", "lu_factor", "lu_factor_ex", "lu_solve", "lu_unpack"]


def _check(op: str, A: Tensor, pivot: bool) -> None:
    if A.ndim < 2:
        raise RuntimeError(f"torch.{op}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A.dtype.kind != "f":
        raise NotImplementedError(f"linalg.{op}: expected a floating-point matrix; got "
                                  f"{A.dtype}")
    if not pivot:
        raise RuntimeError(f"linalg.{op}: LU without pivoting is not implemented on the CPU")


def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False) -> Any:
    """(LU, pivots, info): L below the diagonal of LU (its unit diagonal implied) and U on
    and above it, with A = P L U; the 1-based row swaps (LAPACK's); info > 0 names the
    first zero pivot's column, without raising unless `check_errors`.

    Examples:
        >>> lm.linalg.lu_factor_ex(lm.tensor([[1.0, 2.0], [3.0, 4.0]])).pivots
        tensor([2, 2], dtype=lamina.int32)
    """
    LU, pivots, info = _factor("lu_factor_ex", A, pivot)
    if check_errors and np.any(info):
        raise RuntimeError(f"linalg.lu_factor_ex: U[{info.max()},{info.max()}] is zero"
                           " (the matrix is singular)")
    return return_types.linalg_lu_factor_ex(LU, pivots, as_tensor(info))


def _factor(op: str, A: Tensor, pivot: bool) -> tuple[Tensor, Tensor, Any]:
    """A checked for `op`, factored: (LU, pivots, info as an array)."""
    _check(op, A, pivot)
    factor = LUFactor()
    LU, pivots = factor.apply(A)
    return LU, pivots.detach(), factor.info  # pivots: integers, no gradient, as PyTorch's


def lu_factor(A: Tensor, *, pivot: bool = True, out: Any = None) -> Any:
    """(LU, pivots) of A (see lu_factor_ex); a singular A raises, as PyTorch's does.

    Examples:
        >>> LU, pivots = lm.linalg.lu_factor(lm.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> LU
        tensor([[3.0000, 4.0000],
                [0.3333, 0.6667]])
    """
    LU, pivots, info = _factor("lu_factor", A, pivot)
    if np.any(info):
        j = int(info[info > 0].min())
        raise RuntimeError(
            f"torch.linalg.lu_factor: U[{j},{j}] is zero and using it on lu_solve would "
            "result in a division by zero. If you still want to perform the factorization, "
            "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    if out is not None:
        out[0].copy_(LU), out[1].copy_(pivots)
        return return_types.linalg_lu_factor(*out)
    return return_types.linalg_lu_factor(LU, pivots)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Any:
    """(P, L, U) from lu_factor's result: P (..., m, m), L (..., m, k), U (..., k, n),
    k = min(m, n); empty tensors for what is not unpacked. Gradients reach LU_data.

    Examples:
        >>> P, L, U = lm.lu_unpack(*lm.linalg.lu_factor(lm.tensor([[1.0, 2.0], [3.0, 4.0]])))
        >>> P
        tensor([[0., 1.],
                [1., 0.]])
    """
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = as_tensor(np.empty(0, LU_data.dtype))
    L = U = P = empty
    if unpack_data:
        eye = as_tensor(np.eye(m, k, dtype=LU_data.dtype))
        L = LU_data[..., :, :k].tril(-1) + eye
        U = LU_data[..., :k, :].triu()
    if unpack_pivots:
        P = as_tensor(permutation(LU_pivots.numpy(), m, LU_data.dtype))
    return return_types.lu_unpack(P, L, U)


def lu(A: Tensor, *, pivot: bool = True) -> Any:
    """(P, L, U) with A = P L U: P a permutation, L lower triangular with a unit diagonal,
    U upper triangular (A may be rectangular). Gradients reach A for square A.

    Examples:
        >>> P, L, U = lm.linalg.lu(lm.tensor([[1.0, 2.0], [3.0, 4.0]]))
        >>> bool(lm.allclose(P @ L @ U, lm.tensor([[1.0, 2.0], [3.0, 4.0]])))
        True
    """
    LU, pivots, _ = _factor("lu", A, pivot)
    P, L, U = lu_unpack(LU, pivots)
    return return_types.linalg_lu(P, L, U)


def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
             adjoint: bool = False) -> Tensor:
    """X with A X = B (X A = B where not `left`; A^T in A's place with `adjoint`), A given
    by lu_factor's (LU, pivots). Differentiable in LU and B.

    Examples:
        >>> A = lm.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> lm.linalg.lu_solve(*lm.linalg.lu_factor(A), lm.tensor([[5.0], [11.0]]))
        tensor([[1.],
                [2.]])
    """
    from lamina.linalg.factorizations import solve_triangular

    n = LU.shape[-1]
    if LU.ndim < 2 or LU.shape[-2] != n:
        raise RuntimeError(f"torch.linalg.lu_solve: A must be batches of square matrices, "
                           f"but they are {LU.shape[-2]} by {n} matrices")
    rows = B.shape[-2] if left else B.shape[-1]
    if B.ndim < 2 or rows != n:
        raise ShapeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                         f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                         f"{B.shape[-2]}x{B.shape[-1]})")
    P = as_tensor(permutation(pivots.numpy(), n, LU.dtype))
    L_kw = {"upper": False, "unitriangular": True}
    if left and not adjoint:  # A = P L U: X = U^-1 L^-1 P^T B
        y = solve_triangular(LU, P.mT @ B, **L_kw)
        return solve_triangular(LU, y, upper=True)
    if left:  # A^T = U^T L^T P^T: X = P L^-T U^-T B
        y = solve_triangular(LU.triu().mT, B, upper=False)
        return P @ solve_triangular(LU.tril(-1).mT, y, upper=True, unitriangular=True)
    if not adjoint:  # X P L U = B: X = B U^-1 L^-1 P^T
        y = solve_triangular(LU, B, upper=True, left=False)
        return solve_triangular(LU, y, left=False, **L_kw) @ P.mT
    # X U^T L^T P^T = B: X = B P L^-T U^-T
    y = solve_triangular(LU.tril(-1).mT, B @ P, upper=True, left=False, unitriangular=True)
    return solve_triangular(LU.triu().mT, y, upper=False, left=False)
