"""Matrix factorizations as differentiable ops (lamina.linalg gives them PyTorch's names):
Cholesky and the solve by its factor, the symmetric eigendecomposition, the SVD, QR, the
pseudo-inverse, the matrix exponential and triangular solves. Each works on a stack of
matrices.

Backward, with G the gradients of the outputs (Murray 2016, Townsend 2016, Golub and
Pereyra 1973, the block-triangular form of exp's derivative); where PyTorch defines a
gradient its formula is the same, so the gradients agree:
- cholesky (A = L L^T): S = L^-T Phi(L^T G) L^-1, Phi the lower triangle with its
  diagonal halved; dA = (S + S^T) / 2.
- cholesky_solve (X = (L L^T)^-1 B): dB = A^-1 G, dL = -(dB X^T + X dB^T) L.
- eigh (A = V diag(w) V^T): dA = V (diag(Gw) + sym(F o V^T GV)) V^T, F_ij = 1 / (w_j - w_i).
- svd (A = U S V^T, reduced): dA = U [F o (U^T G_U - G_U^T U) S + diag(G_S)
  + S F o (V^T G_V - G_V^T V)] V^T + (I - U U^T) G_U S^-1 V^T + U S^-1 G_V^T (I - V V^T),
  F_ij = 1 / (s_j^2 - s_i^2); the singular values must be distinct where U or V take one.
- qr (m >= n, reduced): M = R G_R^T - G_Q^T Q, dA = (G_Q + Q copyltu(M)) R^-T.
- pinv (X = A^+, rank kept): dA = -X^T G X^T + (I - A X) G^T X X^T + X^T X G^T (I - X A).
- matrix_exp: the upper right block of exp([[A^T, G], [0, A^T]]).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.functions._util import sum_to
from lamina.functions.decomposition import LinAlgError, _mT, _square


def _sym(a: Any) -> Any:
    return (a + _mT(a)) / 2


def _eye_like(a: Any, n: int) -> Any:
    return np.broadcast_to(np.eye(n, dtype=a.dtype), (*a.shape[:-2], n, n))


def _solve_tri(T: Any, B: Any, lower: bool) -> Any:
    """T^-1 B for triangular T (NumPy's general solve on the triangle: no SciPy)."""
    T = np.tril(T) if lower else np.triu(T)
    return np.linalg.solve(T, B)


def _cholesky_solve(L: Any, B: Any) -> Any:
    """(L L^T)^-1 B by two triangular solves, L's lower triangle read."""
    return _solve_tri(_mT(np.tril(L)), _solve_tri(L, B, lower=True), lower=False)


class CholeskySolve(Function):
    """X with (L L^T) X = B, from the lower Cholesky factor L (only its lower triangle
    read). Its gradient for L is PyTorch's: that of L L^T with L taken whole,
    -(A^-1 gX X^T + X gX^T A^-1) L."""

    def forward(self, B: Any, L: Any) -> Any:
        _square("cholesky_solve", L)
        X = _cholesky_solve(L, B)
        self.save_for_backward(L, X)
        self.shapes = B.shape, L.shape
        return X

    def backward(self, g: Any) -> tuple[Any, Any]:
        L, X = self.saved_tensors
        gB = _cholesky_solve(L, g)  # A is symmetric: A^-T g = A^-1 g
        common = gB @ _mT(X)
        gL = -((common + _mT(common)) @ L) if self.needs_input_grad[1] else None
        return (sum_to(gB, self.shapes[0]),
                None if gL is None else sum_to(gL, self.shapes[1]))


class Cholesky(Function):
    def __init__(self, upper: bool = False) -> None:
        self.upper = upper

    def forward(self, A: Any) -> Any:
        _square("cholesky", A)
        try:
            L = np.linalg.cholesky(A)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.cholesky: the input is not positive-definite; "
                              "linalg.cholesky_ex reports which matrices are not instead of "
                              "raising") from None
        self.save_for_backward(L)
        return _mT(L).copy() if self.upper else L

    def backward(self, G: Any) -> Any:
        (L,) = self.saved_tensors
        if self.upper:
            G = _mT(G)
        P = np.tril(_mT(L) @ G)
        P -= np.tril(np.triu(P)) / 2  # the diagonal halved
        n = L.shape[-1]
        Linv = _solve_tri(L, _eye_like(L, n), lower=True)
        S = _mT(Linv) @ P @ Linv
        return _sym(S)


class Eigh(Function):
    def __init__(self, lower: bool = True) -> None:
        self.lower = lower

    def forward(self, A: Any) -> tuple[Any, Any]:
        _square("eigh", A)
        w, V = np.linalg.eigh(A, UPLO="L" if self.lower else "U")
        self.save_for_backward(w, V)
        return w, V

    def backward(self, gw: Any, gV: Any) -> Any:
        w, V = self.saved_tensors
        inner = np.zeros(V.shape, V.dtype)
        if gV is not None and np.any(gV):
            gap = w[..., None, :] - w[..., :, None]  # w_j - w_i
            n = w.shape[-1]
            gap[..., np.arange(n), np.arange(n)] = np.inf
            inner = _sym((_mT(V) @ gV) / gap)
        if gw is not None:
            inner = inner + gw[..., :, None] * np.eye(w.shape[-1], dtype=w.dtype)
        return V @ inner @ _mT(V)


class SVD(Function):
    """The reduced SVD, U (.., m, k), S (.., k), Vh (.., k, n), k = min(m, n)."""

    def forward(self, A: Any) -> tuple[Any, Any, Any]:
        if A.ndim < 2:
            raise LinAlgError(f"linalg.svd: A must be a matrix or a batch of them; got shape "
                              f"{tuple(A.shape)}")
        U, S, Vh = np.linalg.svd(A, full_matrices=False)
        self.save_for_backward(U, S, Vh)
        return U, S, Vh

    def backward(self, gU: Any, gS: Any, gVh: Any) -> Any:
        U, S, Vh = self.saved_tensors
        V = _mT(Vh)
        k = S.shape[-1]
        inner = np.zeros((*S.shape[:-1], k, k), S.dtype)
        if gS is not None:
            inner += gS[..., :, None] * np.eye(k, dtype=S.dtype)
        s2 = S * S
        gap = s2[..., None, :] - s2[..., :, None]  # s_j^2 - s_i^2
        gap[..., np.arange(k), np.arange(k)] = np.inf
        F = 1 / gap
        out = 0
        if gU is not None and np.any(gU):
            J = F * (_mT(U) @ gU)
            inner += (J + _mT(J)) * S[..., None, :]  # F o (X - X^T), F antisymmetric
            extra = gU - U @ (_mT(U) @ gU)  # (I - U U^T) gU
            out = out + (extra / S[..., None, :]) @ Vh
        if gVh is not None and np.any(gVh):
            gV = _mT(gVh)
            K = F * (_mT(V) @ gV)
            inner += S[..., :, None] * (K + _mT(K))
            extra = gV - V @ (_mT(V) @ gV)
            out = out + U @ _mT(extra / S[..., None, :])
        return U @ inner @ Vh + out


class QR(Function):
    """The reduced QR of a tall (m >= n) matrix; a wide one's factors have no gradient."""

    def __init__(self, mode: str) -> None:
        if mode not in ("reduced", "complete", "r"):
            raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r'; got "
                             f"{mode!r}")
        self.mode = mode

    def forward(self, A: Any) -> tuple[Any, Any]:
        Q, R = np.linalg.qr(A, mode="complete" if self.mode == "complete" else "reduced")
        self.save_for_backward(Q, R)
        return (np.zeros((*A.shape[:-2], 0), A.dtype) if self.mode == "r" else Q), R

    def backward(self, gQ: Any, gR: Any) -> Any:
        Q, R = self.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if m < n or (self.mode == "complete" and m > n):
            raise RuntimeError("linalg.qr: the gradient is defined for mode='reduced' with "
                               "m >= n (as in PyTorch); this input's factors have none")
        if self.mode == "r":
            raise RuntimeError("linalg.qr: mode='r' has no gradient (as in PyTorch); use "
                               "mode='reduced'")
        gQ = np.zeros_like(Q) if gQ is None else gQ
        gR = np.zeros_like(R) if gR is None else gR
        M = R @ _mT(gR) - _mT(gQ) @ Q
        low = np.tril(M, -1)
        M = low + _mT(low) + np.tril(np.triu(M))
        b = gQ + Q @ M
        return _mT(_solve_tri(R, _mT(b), lower=False))


class Pinv(Function):
    def __init__(self, atol: float | None, rtol: float | None, hermitian: bool) -> None:
        self.atol, self.rtol, self.hermitian = atol, rtol, hermitian

    def forward(self, A: Any) -> Any:
        # in float64: a float32 SVD leaves the pseudo-inverse's entries a few ulps off the
        # exact ones that PyTorch's LAPACK path gives
        U, S, Vh = np.linalg.svd(A.astype(np.promote_types(A.dtype, np.float64)),
                                 full_matrices=False)
        smax = S.max(axis=-1, keepdims=True) if S.shape[-1] else np.zeros(S.shape[:-1] + (1,))
        rtol = self.rtol
        if rtol is None:
            rtol = max(A.shape[-2:]) * np.finfo(A.dtype).eps if not self.atol else 0.0
        cutoff = np.maximum(self.atol or 0.0, rtol * smax)
        keep = cutoff < S
        inv = np.where(keep, 1 / np.where(keep, S, 1), 0)
        X = ((_mT(Vh) * inv[..., None, :]) @ _mT(U)).astype(A.dtype)
        self.save_for_backward(A, X)
        return X

    def backward(self, G: Any) -> Any:
        A, X = self.saved_tensors
        m, n = A.shape[-2:]
        Xt, Gt = _mT(X), _mT(G)
        return (-Xt @ G @ Xt + (_eye_like(A, m) - A @ X) @ Gt @ X @ Xt
                + Xt @ X @ Gt @ (_eye_like(A, n) - X @ A))


def expm(A: Any) -> Any:
    """exp(A) by scaling and squaring: A / 2^s small enough that 18 Taylor terms reach
    float64's accuracy, then squared s times."""
    norm = np.abs(A).sum(axis=-2).max(axis=-1) if A.size else np.zeros(A.shape[:-2])
    s = int(max(0, np.ceil(np.log2(max(float(np.max(norm, initial=0.0)), 1e-300) / 0.5))))
    B = A.astype(np.float64) / 2.0 ** s
    term = _eye_like(B, A.shape[-1]).copy()
    out = term.copy()
    for k in range(1, 19):
        term = term @ B / k
        out = out + term
    for _ in range(s):
        out = out @ out
    return out.astype(A.dtype)


class MatrixExp(Function):
    def forward(self, A: Any) -> Any:
        _square("matrix_exp", A)
        self.save_for_backward(A)
        return expm(A)

    def backward(self, G: Any) -> Any:
        (A,) = self.saved_tensors
        n = A.shape[-1]
        block = np.zeros((*A.shape[:-2], 2 * n, 2 * n), A.dtype)
        block[..., :n, :n] = block[..., n:, n:] = _mT(A)
        block[..., :n, n:] = G
        return expm(block)[..., :n, n:]


class SolveTriangular(Function):
    """X with A X = B (or X A = B, left=False), A triangular."""

    def __init__(self, upper: bool, left: bool, unitriangular: bool) -> None:
        self.upper, self.left, self.unit = upper, left, unitriangular

    def _triangle(self, A: Any) -> Any:
        T = np.triu(A) if self.upper else np.tril(A)
        if self.unit:
            T = T.copy()
            T[..., np.arange(A.shape[-1]), np.arange(A.shape[-1])] = 1
        return T

    def forward(self, A: Any, B: Any) -> Any:
        _square("solve_triangular", A)
        T = self._triangle(A)
        X = np.linalg.solve(T, B) if self.left else _mT(np.linalg.solve(_mT(T), _mT(B)))
        self.save_for_backward(T, X)
        return X

    def backward(self, G: Any) -> tuple[Any, Any]:
        T, X = self.saved_tensors
        if self.left:
            gB = np.linalg.solve(_mT(T), G)
            gA = -gB @ _mT(X)
        else:
            gB = _mT(np.linalg.solve(T, _mT(G)))
            gA = -_mT(X) @ gB
        gA = np.triu(gA) if self.upper else np.tril(gA)
        if self.unit:
            gA[..., np.arange(T.shape[-1]), np.arange(T.shape[-1])] = 0
        return gA, gB
