"""The eigendecomposition of a general square matrix, A = V diag(L) V^-1, as
torch.linalg.eig gives it: complex eigenvalues and unit-norm eigenvectors (LAPACK's geev,
through NumPy), for real and complex A, with PyTorch's gradient.

An eigenvector is defined up to a complex phase, so only a loss that does not depend on
that phase has a gradient; PyTorch's check for it is kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import state
from lamina.autograd.function import Function
from lamina.errors import ShapeError


def _h(a: Any) -> Any:
    return np.conj(np.swapaxes(a, -1, -2))


class Eig(Function):
    complex_rule = "own"

    def forward(self, A: Any) -> tuple[Any, Any]:
        if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
            raise ShapeError(f"linalg.eig: A must be a square matrix or a batch of them; got "
                             f"shape {tuple(A.shape)}")
        state.complex_seen = True  # ops now check their operands (complex_rules)
        kind = np.result_type(A.dtype, np.complex64)
        L, V = np.linalg.eig(A)
        L, V = L.astype(kind, copy=False), V.astype(kind, copy=False)
        self.real_in = A.dtype.kind != "c"
        self.save_for_backward(L, V)
        return L, V

    def backward(self, gL: Any, gV: Any) -> Any:
        # PyTorch's rule (FunctionsManual's linalg_eig_backward):
        # gA = V^-H (diag(gL) + (V^H gV - V^H V diag(re(V^H gV))) / conj(E)) V^H,
        # E_ij = L_j - L_i off the diagonal.
        L, V = self.saved_tensors
        n = L.shape[-1]
        Vh = _h(V)
        inner = np.zeros(V.shape, V.dtype)
        if gV is not None and np.any(gV):
            VhgV = Vh @ gV
            diag = np.diagonal(VhgV, axis1=-2, axis2=-1)
            if np.abs(diag.imag).max(initial=0) > 1e-4 * max(np.abs(diag).max(initial=0), 1):
                raise RuntimeError(
                    "linalg_eig_backward: The eigenvectors in the complex case are specified "
                    "up to multiplication by e^{i phi}. The specified loss function depends "
                    "on this quantity, so it is ill-defined.")
            inner = VhgV - (Vh @ V) * diag.real[..., None, :]
            gap = np.conj(L[..., None, :] - L[..., :, None])
            gap[..., np.arange(n), np.arange(n)] = 1
            inner = inner / gap
            inner[..., np.arange(n), np.arange(n)] = 0
        if gL is not None:
            inner = inner + gL[..., :, None] * np.eye(n, dtype=V.dtype)
        gA = np.linalg.solve(Vh, inner @ Vh)
        return np.ascontiguousarray(gA.real) if self.real_in else gA
