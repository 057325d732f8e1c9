"""lamina.linalg's factorizations and what is built on them: cholesky, eigh, svd, qr,
pinv, lstsq, matrix_rank, matrix_exp, solve_triangular, and the `_ex` forms that report a
failure in `info` instead of raising. Differentiable as PyTorch's are (see
lamina/functions/factorizations.py for the formulas)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import return_types
from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.functions import factorizations as fz
from lamina.functions.decomposition import Inv, LinAlgError

linalg_eigh = return_types.linalg_eigh
linalg_eig = return_types.linalg_eig
linalg_svd = return_types.linalg_svd
linalg_qr = return_types.linalg_qr
linalg_cholesky_ex = return_types.linalg_cholesky_ex
linalg_inv_ex = return_types.linalg_inv_ex
linalg_solve_ex = return_types.linalg_solve_ex
linalg_lstsq = return_types.linalg_lstsq


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """L, lower triangular, with A = L L^T (U = L^T with `upper`), for symmetric
    positive-definite A; raises LinAlgError for another.

    Examples:
        >>> lm.linalg.cholesky(lm.tensor([[4.0, 2.0], [2.0, 5.0]]))
        tensor([[2., 0.],
                [1., 2.]])
    """
    return fz.Cholesky(upper).apply(A)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> Any:
    """(L, info): info 0 where a matrix of the batch is positive-definite, else > 0 (its L
    then undefined: NaN here), without raising unless `check_errors`.

    Examples:
        >>> lm.linalg.cholesky_ex(-lm.eye(2)).info
        tensor(1, dtype=lamina.int32)
    """
    bad = _not_positive_definite(A.detach().numpy())
    if check_errors and bad.any():
        raise LinAlgError("linalg.cholesky_ex: the input is not positive-definite")
    if not bad.any():
        L = cholesky(A, upper=upper)
    else:
        L = as_tensor(np.full(tuple(A.shape), np.nan, A.numpy().dtype if not A.requires_grad
                              else A.detach().numpy().dtype))
    return linalg_cholesky_ex(L, as_tensor(bad.astype(np.int32)))


def _not_positive_definite(a: np.ndarray) -> np.ndarray:
    flat = a.reshape(-1, *a.shape[-2:])
    bad = np.zeros(len(flat), bool)
    for i, m in enumerate(flat):
        try:
            np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            bad[i] = True
    return bad.reshape(a.shape[:-2])


def eigh(A: Tensor, UPLO: str = "L") -> Any:  # noqa: N803 - PyTorch's name
    """(eigenvalues ascending, eigenvectors as columns) of a symmetric matrix, read from
    its lower (UPLO="L") or upper triangle.

    Examples:
        >>> lm.linalg.eigh(lm.tensor([[2.0, 0.0], [0.0, 1.0]])).eigenvalues
        tensor([1., 2.])
    """
    if UPLO not in ("L", "U"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U'; got {UPLO!r}")
    return linalg_eigh(*fz.Eigh(UPLO == "L").apply(A))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues of a symmetric matrix, ascending.

    Examples:
        >>> lm.linalg.eigvalsh(lm.tensor([[2.0, 1.0], [1.0, 2.0]]))
        tensor([1., 3.])
    """
    return eigh(A, UPLO).eigenvalues


def eig(A: Tensor) -> Any:  # noqa: N803 - PyTorch's name
    """(eigenvalues, eigenvectors as unit-norm columns) of a square matrix, complex; its
    gradient needs a loss that does not depend on the eigenvectors' phases.

    Examples:
        >>> lm.linalg.eig(lm.tensor([[0.0, -1.0], [1.0, 0.0]])).eigenvalues
        tensor([0.+1.j, 0.-1.j])
    """
    from lamina.functions.eig import Eig

    return linalg_eig(*Eig().apply(A))


def eigvals(A: Tensor) -> Tensor:  # noqa: N803
    """The eigenvalues of a square matrix, complex.

    Examples:
        >>> lm.linalg.eigvals(lm.tensor([[2.0, 0.0], [0.0, 3.0]]))
        tensor([2.+0.j, 3.+0.j])
    """
    return eig(A).eigenvalues


def svd(A: Tensor, full_matrices: bool = True, *, driver: Any = None) -> Any:
    """(U, S, Vh) with A = U diag(S) Vh, S descending. With `full_matrices` (the default,
    as PyTorch's) U and Vh are square, their extra columns without gradient; the reduced
    factors (full_matrices=False) are what most code wants.

    Examples:
        >>> lm.linalg.svd(lm.tensor([[3.0, 0.0], [0.0, 4.0]])).S
        tensor([4., 3.])
    """
    U, S, Vh = fz.SVD().apply(A)
    m, n = A.shape[-2:]
    if full_matrices and m != n:
        Uf, _, Vhf = np.linalg.svd(A.detach().numpy(), full_matrices=True)
        k = min(m, n)
        from lamina.functions.shape import cat

        if m > k:
            U = cat([U, as_tensor(Uf[..., :, k:])], -1)
        if n > k:
            Vh = cat([Vh, as_tensor(Vhf[..., k:, :])], -2)
    return linalg_svd(U, S, Vh)


def qr(A: Tensor, mode: str = "reduced") -> Any:
    """(Q, R) with A = Q R, Q's columns orthonormal, R upper triangular: "reduced"
    (Q (m, k)), "complete" (Q square) or "r" (R alone; Q empty).

    Examples:
        >>> lm.linalg.qr(lm.tensor([[3.0], [4.0]])).R.abs()
        tensor([[5.]])
    """
    return linalg_qr(*fz.QR(mode).apply(A))


def pinv(A: Tensor, *, atol: float | None = None, rtol: float | None = None,
         hermitian: bool = False) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values at most max(atol, rtol * the
    largest) count as zero (rtol by default max(m, n) * eps).

    Examples:
        >>> lm.linalg.pinv(lm.tensor([[2.0, 0.0], [0.0, 0.0]]))
        tensor([[0.5000, 0.0000],
                [0.0000, 0.0000]])
    """
    return fz.Pinv(atol, rtol, hermitian).apply(A)


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *,
          driver: str | None = None) -> Any:
    """The least-squares solution X of A X = B, as PyTorch's (solution, residuals, rank,
    singular_values): the residuals' squared norms where m > n, A has full rank and the
    driver reports them ("gels", "gelsd", "gelss"; not "gelsy", the default), the rank
    except for "gels", the singular values for "gelsd" and "gelss"; empty otherwise.

    Examples:
        >>> lm.linalg.lstsq(lm.tensor([[1.0], [1.0]]), lm.tensor([[1.0], [3.0]])).solution
        tensor([[2.]])
    """
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"linalg.lstsq: driver must be one of gels, gelsy, gelsd, gelss; "
                           f"got {driver!r}")
    vector = B.ndim == A.ndim - 1
    rhs = B.unsqueeze(-1) if vector else B
    X = pinv(A, rtol=rcond) @ rhs
    a = A.detach().numpy()
    m, n = a.shape[-2:]
    s = np.linalg.svd(a, compute_uv=False)
    tol = (rcond if rcond is not None else np.finfo(a.dtype).eps * max(m, n)) * s[..., :1]
    rank = (s > tol).sum(-1)
    empty = as_tensor(np.zeros(0, a.dtype))
    residuals = empty
    if m > n and driver != "gelsy" and bool((rank == n).all()):
        residuals = ((A @ X - rhs) ** 2).sum(-2)
    return linalg_lstsq(X.squeeze(-1) if vector else X, residuals,
                        as_tensor(rank.astype(np.int64)) if driver != "gels"
                        else as_tensor(np.zeros(0, np.int64)),
                        as_tensor(s) if driver in ("gelsd", "gelss") else empty)


def matrix_rank(A: Tensor, *, atol: float | None = None, rtol: float | None = None,
                hermitian: bool = False) -> Tensor:
    """The number of singular values above max(atol, rtol * the largest), rtol by default
    max(m, n) * eps (when atol is not given).

    Examples:
        >>> lm.linalg.matrix_rank(lm.tensor([[1.0, 2.0], [2.0, 4.0]]))
        tensor(1)
    """
    a = A.detach().numpy()
    s = np.linalg.svd(a, compute_uv=False)
    if rtol is None:
        rtol = max(a.shape[-2:]) * np.finfo(a.dtype).eps if not atol else 0.0
    tol = np.maximum(atol or 0.0, rtol * s.max(-1, initial=0.0)[..., None])
    return as_tensor((s > tol).sum(-1).astype(np.int64))


def matrix_exp(A: Tensor) -> Tensor:
    """The matrix exponential, sum of A^k / k!.

    Examples:
        >>> lm.linalg.matrix_exp(lm.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    return fz.MatrixExp().apply(A)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """X with A X = B (X A = B where not `left`), reading only A's upper or lower triangle
    (its diagonal taken as ones with `unitriangular`).

    Examples:
        >>> lm.linalg.solve_triangular(lm.tensor([[2.0, 1.0], [0.0, 1.0]]),
        ...                            lm.tensor([[3.0], [1.0]]), upper=True)
        tensor([[1.],
                [1.]])
    """
    return fz.SolveTriangular(upper, left, unitriangular).apply(A, B)


def inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:
    """(inverse, info): info > 0 for a singular matrix (its inverse then NaN), without
    raising unless `check_errors`.

    Examples:
        >>> lm.linalg.inv_ex(lm.zeros(2, 2)).info
        tensor(1, dtype=lamina.int32)
    """
    try:
        return linalg_inv_ex(Inv().apply(A), as_tensor(np.zeros(A.shape[:-2], np.int32)))
    except LinAlgError:
        if check_errors:
            raise
    info = _singular(A.detach().numpy())
    return linalg_inv_ex(as_tensor(np.full(tuple(A.shape), np.nan, A.detach().numpy().dtype)),
                         as_tensor(info))


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> Any:
    """(result, info) of linalg.solve: info > 0 for a singular A, without raising unless
    `check_errors`.

    Examples:
        >>> lm.linalg.solve_ex(lm.eye(2), lm.ones(2)).info
        tensor(0, dtype=lamina.int32)
    """
    from lamina.linalg import solve

    try:
        return linalg_solve_ex(solve(A, B, left=left),
                               as_tensor(np.zeros(A.shape[:-2], np.int32)))
    except LinAlgError:
        if check_errors:
            raise
    shape = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2])) + tuple(B.shape[-2:])
    return linalg_solve_ex(as_tensor(np.full(shape, np.nan, B.detach().numpy().dtype)),
                           as_tensor(_singular(A.detach().numpy())))


def _singular(a: np.ndarray) -> np.ndarray:
    s = np.linalg.svd(a, compute_uv=False)
    return (s[..., -1] <= np.finfo(a.dtype).eps * s[..., 0]).astype(np.int32)


__all__ = ["cholesky", "cholesky_ex", "eig", "eigh", "eigvals", "eigvalsh", "inv_ex", "lstsq",
           "matrix_exp", "matrix_rank", "pinv", "qr", "solve_ex", "solve_triangular", "svd"]
