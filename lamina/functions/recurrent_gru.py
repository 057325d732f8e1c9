"""The GRU's fused ops: one step (GRUCell), and a whole layer's recurrence (GRUSequence).

A GRU step as separate ops records two splits, two sigmoids, a tanh and five products and
sums, and the per-step linear adds a (3H, H) weight gradient T times in backward. The
sequence op keeps the gates of every step instead, so that dW_hh is one GEMM over all of
them, and writes each step's gates into one (T, B, 3H) array instead of a dozen
temporaries. Its formulas are PyTorch's: r = s(xr + hr), z = s(xz + hz),
n = tanh(xn + r * hn), h = n + z * (h_prev - n).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions import recurrent_blas
from lamina.functions._util import column_sums
from lamina.functions.activation import sigmoid_array
from lamina.fused.mkl_blas import matmul


class GRUCell(Function):
    """x-gates (B, 3H), h-gates (B, 3H) in PyTorch's order r, z, n, and h_prev -> h.

    r = s(xr + hr), z = s(xz + hz), n = tanh(xn + r * hn), h = (1 - z) * n + z * h_prev.
    """

    def forward(self, gx: Any, gh: Any, h_prev: Any) -> Any:
        hsize = h_prev.shape[-1]
        if gx.shape != gh.shape or gx.shape[-1] != 3 * hsize:
            raise ShapeError(
                f"gru_cell: expected x-gates and h-gates (B, {3 * hsize}) for a hidden state "
                f"{h_prev.shape}, got {gx.shape} and {gh.shape}"
            )
        xr, xz, xn = np.split(gx, 3, axis=1)
        hr, hz, hn = np.split(gh, 3, axis=1)
        r = sigmoid_array(xr + hr)
        z = sigmoid_array(xz + hz)
        n = np.tanh(xn + r * hn)
        self.save_for_backward(r, z, n, hn, h_prev)
        return (1 - z) * n + z * h_prev

    def backward(self, gy: Any) -> tuple[Any, Any, Any]:
        r, z, n, hn, h_prev = self.saved_tensors
        gn = gy * (1 - z) * (1 - n * n)
        gz = gy * (h_prev - n) * z * (1 - z)
        gr = gn * hn * r * (1 - r)
        g_x = np.concatenate([gr, gz, gn], axis=1)
        g_h = np.concatenate([gr, gz, gn * r], axis=1)
        return g_x, g_h, gy * z


class GRUSequence(Function):
    """The whole recurrence of one GRU layer over T steps as one op (time-major).

    Inputs: x-gates (T, B, 3H) = x @ W_ih.T + b_ih for every step (one GEMM, outside), h0
    (B, H), W_hh (3H, H) and optionally b_hh (3H,). Outputs: h for every step (T, B, H),
    and the final h (B, H).
    """

    def forward(self, xg: Any, h0: Any, W_hh: Any, b_hh: Any = None) -> tuple[Any, Any]:
        T, B, G = xg.shape
        H = G // 3
        if G != 3 * H or h0.shape != (B, H) or W_hh.shape != (G, H):
            raise ShapeError(f"gru_sequence: expected x-gates (T, B, 3H), a state (B, H) and "
                             f"W_hh (3H, H); got {xg.shape}, {h0.shape} and {W_hh.shape}")
        hs = np.empty((T + 1, B, H), xg.dtype)  # hs[t] is the state before step t
        hs[0] = h0
        acts = np.empty_like(xg)  # r, z and n of every step
        hns = np.empty((T, B, H), xg.dtype)  # hn = h @ W_hn.T + b_hn, which r gates
        self.has_bias = b_hh is not None
        self.save_for_backward(acts, hns, hs, W_hh)
        compiled = fused.compiled()
        if compiled is not None and fused.fits(xg, hs, W_hh, *(() if b_hh is None else (b_hh,))):
            self._compiled_steps(compiled, xg, b_hh)
            return hs[1:], hs[-1]
        hg = np.empty((B, G), xg.dtype)
        for t in range(T):
            np.matmul(hs[t], W_hh.T, out=hg)
            if b_hh is not None:
                hg += b_hh
            a, x = acts[t], xg[t]
            rz = np.add(x[:, : 2 * H], hg[:, : 2 * H], out=a[:, : 2 * H])
            rz *= 0.5  # s(v) = tanh(v / 2) / 2 + 1 / 2: never overflows
            np.tanh(rz, out=rz)
            rz *= 0.5
            rz += 0.5
            hns[t] = hg[:, 2 * H :]
            n = np.multiply(a[:, :H], hns[t], out=a[:, 2 * H :])
            n += x[:, 2 * H :]
            np.tanh(n, out=n)
            h = np.subtract(hs[t], n, out=hs[t + 1])
            h *= a[:, H : 2 * H]
            h += n
        return hs[1:], hs[-1]

    def _compiled_steps(self, kernels: Any, xg: Any, b_hh: Any) -> None:
        """The recurrence in three compiled kernels and two tanh a step (lamina.fused)
        beside its GEMM, into the arrays forward saved."""
        acts, hns, hs, W_hh = self.saved_tensors
        H = hs.shape[2]
        bias = np.zeros(3 * H, xg.dtype) if b_hh is None else b_hh
        parts = fused.threaded_parts()
        if recurrent_blas.on_blas(hs.shape[1], W_hh):
            recurrent_blas.gru_forward(kernels, xg, hs, acts, hns, W_hh, bias, parts)
            return
        if parts > 1:  # each thread with its share of the rows, or of the units
            kernel = (kernels.gru_forward_rows if kernels.share_rows(hs.shape[1], W_hh, parts)
                      else kernels.gru_forward_threaded)
            kernel(W_hh, bias, xg, hs, acts, hns, parts)
            return
        hg = np.empty((3 * H, hs.shape[1]), xg.dtype)
        for t in range(len(acts)):
            # W_hh @ h.T, read transposed (see lamina/fused/numba_recurrent.py).
            np.matmul(W_hh, hs[t].T, out=hg)
            a = acts[t]
            kernels.gru_preactivate(xg[t], hg, bias, a, hns[t])
            np.tanh(a[:, : 2 * H], out=a[:, : 2 * H])
            kernels.gru_new_gate(a, xg[t], hns[t])
            np.tanh(a[:, 2 * H :], out=a[:, 2 * H :])
            kernels.gru_state(a, hs[t], hs[t + 1])

    def backward(self, g_hs: Any, g_hT: Any) -> tuple[Any, ...]:
        acts, hns, hs, W_hh = self.saved_tensors
        T, B, G = acts.shape
        H = G // 3
        g_x = np.empty_like(acts)  # the x-gates' gradients
        g_hg = np.empty_like(acts)  # the h-gates' (h @ W_hh.T + b_hh): n's part times r
        gh = np.array(g_hT, acts.dtype)
        compiled = fused.compiled()
        if compiled is not None and fused.fits(acts, hs, W_hh):
            g_hs = np.ascontiguousarray(g_hs, acts.dtype)
            via_w = np.zeros_like(gh)  # the state's gradient through W_hh, from step t + 1
            parts = fused.threaded_parts()
            if recurrent_blas.on_blas(B, W_hh):
                recurrent_blas.gru_backward(compiled, acts, hns, hs, g_hs, gh, via_w, g_x,
                                            g_hg, W_hh, parts)
            elif parts > 1:  # each thread with its share of the rows, or of the units
                kernel = (compiled.gru_backward_rows if compiled.share_rows(B, W_hh, parts)
                          else compiled.gru_backward_threaded)
                kernel(compiled.transposed(W_hh, parts), acts, hns, hs, g_hs, gh, via_w, g_x,
                       g_hg, parts)
            else:
                for t in range(T - 1, -1, -1):
                    compiled.gru_backward_step(acts[t], hns[t], hs[t], g_hs[t], gh, via_w,
                                               g_x[t], g_hg[t])
                    matmul(g_hg[t], W_hh, out=via_w)
                gh += via_w
                return self._weight_grads(g_x, g_hg, gh)
            gh += np.matmul(g_hg[0], W_hh)
            return self._weight_grads(g_x, g_hg, gh)
        for t in range(T - 1, -1, -1):
            gh += g_hs[t]
            a, gx, gg = acts[t], g_x[t], g_hg[t]
            r, z, n = a[:, :H], a[:, H : 2 * H], a[:, 2 * H :]
            gn = np.multiply(gh, 1 - z, out=gx[:, 2 * H :])  # through h = n + z (h_prev - n)
            gn *= 1 - n * n
            gz = np.subtract(hs[t], n, out=gx[:, H : 2 * H])
            gz *= gh
            gz *= z * (1 - z)
            gr = np.multiply(gn, hns[t], out=gx[:, :H])
            gr *= r * (1 - r)
            gg[:, : 2 * H] = gx[:, : 2 * H]
            np.multiply(gn, r, out=gg[:, 2 * H :])
            gh *= z
            gh += gg @ W_hh
        return self._weight_grads(g_x, g_hg, gh)

    def _weight_grads(self, g_x: Any, g_hg: Any, gh: Any) -> tuple[Any, ...]:
        """The op's gradients from the gate gradients of every step and the initial
        state's: dW_hh and db_hh are one GEMM and one sum over all steps."""
        hs = self.saved_tensors[2]
        T, B, G = g_hg.shape
        H = G // 3
        need = self.needs_input_grad
        flat = g_hg.reshape(T * B, G)
        gW = matmul(flat.T, hs[:T].reshape(T * B, H)) if need[2] else None
        grads = [g_x if need[0] else None, gh if need[1] else None, gW]
        if self.has_bias:
            grads.append(column_sums(flat) if need[3] else None)
        return tuple(grads)


def gru_cell(x_gates: Tensor, h_gates: Tensor, h_prev: Tensor) -> Tensor:
    """One GRU step from x @ W_ih.T + b_ih and h @ W_hh.T + b_hh, each (B, 3H), gates r, z, n."""
    return GRUCell().apply(x_gates, h_gates, h_prev)


def gru_sequence(x_gates: Tensor, h0: Tensor, W_hh: Tensor, b_hh: Tensor | None = None
                 ) -> tuple[Tensor, Tensor]:
    """A whole GRU layer's recurrence in one op, time-major.

    Args:
        x_gates: x @ W_ih.T + b_ih for all steps, (T, B, 3H), gates r, z, n.
        h0: the initial state (B, H).
        W_hh: recurrent weight (3H, H); b_hh: optional bias (3H,).

    Returns:
        (h for every step (T, B, H), final h (B, H)).
    """
    args = (x_gates, h0, W_hh) if b_hh is None else (x_gates, h0, W_hh, b_hh)
    return GRUSequence().apply(*args)
