"""LU factorization with partial pivoting (LAPACK's getrf, which NumPy does not expose):
A = P L U, L unit lower triangular, U upper, the row swaps as LAPACK's 1-based pivots.

Right-looking and blocked: each panel of NB columns is factored a column at a time (the
largest magnitude below the diagonal chosen as pivot, the first on ties, as LAPACK's
isamax), then the rows to its right are solved against the panel's L and the trailing
matrix updated by one GEMM, over every matrix of a stack at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.functions.decomposition import _mT

NB = 32  # panel width: the trailing update is a GEMM of this inner size


def factor(A: Any) -> tuple[Any, Any, Any]:
    """(LU packed as LAPACK's, pivots (..., min(m, n)) int32 1-based, info (...) int32:
    the first zero pivot's 1-based column, 0 if none) of A (..., m, n)."""
    m, n = A.shape[-2:]
    k = min(m, n)
    lu = np.array(A, copy=True).reshape(-1, m, n)
    count = len(lu)
    piv = np.empty((count, k), np.int32)
    info = np.zeros(count, np.int32)
    every = np.arange(count)
    for j0 in range(0, k, NB):
        j1 = min(j0 + NB, k)
        for j in range(j0, j1):
            p = j + np.argmax(np.abs(lu[:, j:, j]), axis=1)
            piv[:, j] = p + 1
            row = lu[:, j, :].copy()
            lu[:, j, :] = lu[every, p, :]
            lu[every, p, :] = row
            pivot = lu[:, j, j]
            zero = pivot == 0  # then the column below is zero too: nothing to scale
            info[(info == 0) & zero] = j + 1
            lu[:, j + 1:, j] /= np.where(zero, 1, pivot)[:, None]
            lu[:, j + 1:, j + 1:j1] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:j1]
        if j1 < n:
            unit_lower = np.tril(lu[:, j0:j1, j0:j1], -1) + np.eye(j1 - j0, dtype=lu.dtype)
            lu[:, j0:j1, j1:] = np.linalg.solve(unit_lower, lu[:, j0:j1, j1:])
            lu[:, j1:, j1:] -= lu[:, j1:, j0:j1] @ lu[:, j0:j1, j1:]
    batch = A.shape[:-2]
    return lu.reshape(A.shape), piv.reshape(*batch, k), info.reshape(batch)


def permutation(piv: Any, m: int, dtype: Any) -> Any:
    """P (..., m, m) with A = P L U, from LAPACK's pivots (row j swapped with piv[j] - 1,
    in order)."""
    batch, k = piv.shape[:-1], piv.shape[-1]
    perm = np.broadcast_to(np.arange(m), (*batch, m)).reshape(-1, m).copy()
    flat = piv.reshape(-1, k) - 1
    every = np.arange(len(perm))
    for j in range(k):
        at_j = perm[:, j].copy()
        perm[:, j] = perm[every, flat[:, j]]
        perm[every, flat[:, j]] = at_j
    # perm[i] is the row of A that row i of L U came from: A[perm] = L U, so P[perm[i], i] = 1
    P = np.zeros((len(perm), m, m), dtype)
    P[every[:, None], perm, np.arange(m)] = 1
    return P.reshape(*batch, m, m)


class LUFactor(Function):
    """A (..., m, n) -> (LU, pivots); the gradient reaches A through LU (square A)."""

    def forward(self, A: Any) -> tuple[Any, Any]:
        lu, piv, self.info = factor(A)
        self.save_for_backward(lu, piv)
        return lu, piv

    def backward(self, g_lu: Any, g_piv: Any = None) -> Any:
        lu, piv = self.saved_tensors
        m, n = lu.shape[-2:]
        if m != n:
            raise NotImplementedError(
                f"lu_factor backward: the gradient of the LU factorization of a {m} by {n} "
                "matrix is not built, only of square ones")
        # A = P L U: dA = P (dL U + L dU), so with phi = tril(L^T gL, -1) + triu(gU U^T),
        # gA = P L^-T phi U^-T (the adjoint of that map restricted to L's and U's parts)
        eye = np.eye(n, dtype=lu.dtype)
        L, U = np.tril(lu, -1) + eye, np.triu(lu)
        phi = np.tril(_mT(L) @ np.tril(g_lu, -1), -1) + np.triu(np.triu(g_lu) @ _mT(U))
        left = np.linalg.solve(_mT(L), phi)
        gA = _mT(np.linalg.solve(U, _mT(left)))
        return permutation(piv, n, lu.dtype) @ gA
