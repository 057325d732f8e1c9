"""Matrix inverse, linear solve and singular values as differentiable ops (lamina.linalg
gives them PyTorch's names). Each works on a stack of matrices (..., n, n) or (..., m, n).

Backward, with X the op's output and G its gradient:
- inv: dA = -X^T G X^T;
- solve (A X = B): dB = solve(A^T, G), dA = -dB X^T;
- svdvals (A = U diag(S) V^T): dA = U diag(G) V^T, exact where the singular values are
  distinct, as PyTorch's;
- det: dA = G adj(A)^T, the adjugate from the SVD (so a singular A has its gradient too);
- slogdet's log|det|: dA = G A^-T.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.errors import ShapeError
from lamina.functions._util import sum_to


class LinAlgError(RuntimeError):
    """A matrix the op cannot handle (singular for inv and solve), PyTorch's
    torch.linalg.LinAlgError.

    Examples:
        >>> try:
        ...     lm.linalg.inv(lm.zeros(2, 2))
        ... except lm.linalg.LinAlgError as e:
        ...     print("singular" in str(e), isinstance(e, RuntimeError))
        True True
    """


def _square(op: str, A: Any) -> None:
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"linalg.{op}: A must be a square matrix or a batch of them, "
                         f"(*, n, n); got {tuple(A.shape)}")
    if A.dtype.kind != "f":
        raise TypeError(f"linalg.{op}: A must be floating point; got {A.dtype}")


def _mT(a: Any) -> Any:
    return np.swapaxes(a, -1, -2)


class Inv(Function):
    def forward(self, A: Any) -> Any:
        _square("inv", A)
        try:
            X = np.linalg.inv(A)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.inv: the matrix is singular (not invertible); "
                              "linalg.pinv or a small ridge (A + eps * I) gives an "
                              "answer") from None
        self.save_for_backward(X)
        return X

    def backward(self, g: Any) -> Any:
        X = self.saved_tensors[0]
        return -(_mT(X) @ g @ _mT(X))


class Solve(Function):
    """X with A X = B; B (..., n, k). The vector case is the caller's (lamina.linalg)."""

    def forward(self, A: Any, B: Any) -> Any:
        _square("solve", A)
        if B.ndim < 2 or B.shape[-2] != A.shape[-1]:
            raise ShapeError(f"linalg.solve: B must be (*, {A.shape[-1]}, k) or "
                             f"({A.shape[-1]},) for A {tuple(A.shape)}; got {tuple(B.shape)}")
        try:
            X = np.linalg.solve(A, B)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.solve: A is singular, the system has no unique "
                              "solution; linalg.lstsq-style least squares or a ridge "
                              "(A + eps * I) gives one") from None
        self.save_for_backward(A, X)
        self.b_shape = B.shape
        return X

    def backward(self, g: Any) -> tuple[Any, Any]:
        A, X = self.saved_tensors
        gB = np.linalg.solve(_mT(A), g)
        gA = -(gB @ _mT(X))
        return sum_to(gA, A.shape), sum_to(gB, self.b_shape)


class Svdvals(Function):
    def forward(self, A: Any) -> Any:
        if A.ndim < 2:
            raise ShapeError(f"linalg.svdvals: A must be (*, m, n); got {tuple(A.shape)}")
        U, S, Vh = np.linalg.svd(A, full_matrices=False)
        self.save_for_backward(U, Vh)
        return S

    def backward(self, g: Any) -> Any:
        U, Vh = self.saved_tensors
        return (U * g[..., None, :]) @ Vh


class Det(Function):
    def forward(self, A: Any) -> Any:
        _square("det", A)
        self.save_for_backward(A)
        return np.linalg.det(A)

    def backward(self, g: Any) -> Any:
        A = self.saved_tensors[0]
        U, S, Vh = np.linalg.svd(A)
        # adj(A)^T = det(U) det(V) U diag(prod of the other singular values) V^T, with no
        # division by a singular value that may be zero
        ones = np.ones(S.shape[:-1] + (1,), S.dtype)
        before = np.cumprod(np.concatenate([ones, S[..., :-1]], -1), -1)
        after = np.cumprod(np.concatenate([ones, S[..., :0:-1]], -1), -1)[..., ::-1]
        others = before * after
        sign = np.linalg.det(U) * np.linalg.det(Vh)
        adj_t = (U * others[..., None, :]) @ Vh * sign[..., None, None]
        return (g[..., None, None] * adj_t).astype(A.dtype, copy=False)


class Slogdet(Function):
    """(sign, log|det|); only log|det| takes a gradient."""

    def forward(self, A: Any) -> tuple[Any, Any]:
        _square("slogdet", A)
        sign, logabs = np.linalg.slogdet(A)
        self.save_for_backward(A)
        return sign.astype(A.dtype), logabs.astype(A.dtype)

    def backward(self, g_sign: Any, g_logabs: Any) -> Any:
        A = self.saved_tensors[0]
        try:
            inv_t = _mT(np.linalg.inv(A))
        except np.linalg.LinAlgError:
            raise LinAlgError("slogdet backward: A is singular, so log|det A| is -inf and "
                              "has no gradient there") from None
        return g_logabs[..., None, None] * inv_t

