"""One LSTM layer over a whole sequence as one op, for inference (no gradient recorded):
its input projection included, the gates of each step laid out gate-major (4H, B). What
nn.LSTM runs under no_grad or on weights that want no gradient.

F.lstm_sequence takes the x-gates from a GEMM outside, laid out (T, B, 4H). Its recurrent
GEMM runs fastest as W_hh @ h.T, whose result is a step's h-gates transposed (4H, B), so
each step adds two arrays read against each other's memory order, and its elementwise
kernels read a gate as strided pieces of rows. Here the x-gates are made (T, 4H, B), one
GEMM a step for all steps at once (one GEMM in all where B is 1, whose (T, 4H) is that
layout already), so a step adds two contiguous (4H, B) arrays, and every gate is one
contiguous block that the step's kernels read whole.

Training keeps F.lstm_sequence's layout: its backward needs every step's gate gradients as
one matrix for the weights' GEMM, and gathering gate-major steps into one costs a strided
copy a step, more than this layout saves in the forward (benchmarks/RESULTS.md).

Where F.lstm_sequence's compiled kernels take the batch (lamina's threads, or one thread
and a batch recurrent.serial_steps takes), the op hands its steps to them instead: one
kernel call a layer beats the gate-major steps' five calls a step.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

from lamina import fused, thread_pools
from lamina.autograd.function import Function
from lamina.errors import ShapeError
from lamina.functions import recurrent_blas
from lamina.functions._util import gemm_rows
from lamina.functions.recurrent import LSTMSequence, serial_steps
from lamina.fused import few_rows
from lamina.fused.mkl_blas import matmul

# The largest input projection (multiply-adds) an LSTM on lamina's threads computes on
# one BLAS thread where numba's pool does not take it. After a GEMM, OpenBLAS's threads
# spin on the cores for a while, and the recurrence's threads that start next wait for
# them at every step: on a projection this small, its second thread saves less than that
# costs (benchmarks/RESULTS.md, session 40).
QUIET_PROJECTION = 1 << 24


class LSTMInference(Function):
    """x (T, B, I), h0 and c0 (B, H), W_ih (4H, I), W_hh (4H, H), and the biases b_ih and
    b_hh (4H,) both or neither -> h of every step (T, B, H), the final h and c (B, H).
    Forward only: nn.LSTM runs it where no gradient is recorded."""

    def forward(self, x: Any, h0: Any, c0: Any, W_ih: Any, W_hh: Any, b_ih: Any = None,
                b_hh: Any = None) -> tuple[Any, Any, Any]:
        T, B, I = x.shape
        G, H = W_hh.shape
        if G != 4 * H or W_ih.shape != (G, I) or h0.shape != (B, H) or c0.shape != (B, H):
            raise ShapeError(f"lstm: expected x (T, B, I), states (B, H), W_ih (4H, I) and "
                             f"W_hh (4H, H); got {x.shape}, {h0.shape}, {c0.shape}, "
                             f"{W_ih.shape}, {W_hh.shape}")
        dtype = W_hh.dtype
        bias = 0 if b_ih is None else b_ih + b_hh
        if B > 1 and _one_call_a_layer(B, W_hh, W_ih, h0, c0):
            # F.lstm_sequence's compiled steps, on the x-gates laid out (T, B, 4H): one
            # kernel call a layer, each thread its rows or units, not five calls a step
            xg = gemm_rows(x, W_ih.T, add=None if b_ih is None else bias)
            if fused.fits(xg):
                hs, cs, _ = LSTMSequence().recur(xg, h0, c0, W_hh, None)
                return hs[1:], hs[-1], cs[-1]
        parts = fused.threaded_parts() if B == 1 and fused.fits(W_hh, W_ih, h0, c0) else 1
        threaded = parts > 1
        if B == 1:  # (T, 4H) is (T, 4H, 1): one GEMM, W_ih read once
            xg = _projection(x[:, 0], W_ih, bias, parts)[:, :, None]
        else:  # one GEMM a step of [W_ih | b] and [x_t; 1], for all steps at once
            W_xb = np.empty((G, I + 1), dtype)
            W_xb[:, :I], W_xb[:, I] = W_ih, bias
            xs = np.empty((T, I + 1, B), dtype)
            xs[:, :I], xs[:, I] = x.transpose(0, 2, 1), 1
            xg = np.matmul(W_xb, xs)
        if threaded and fused.fits(xg):
            # (T, 4H, 1) is (T, 1, 4H): F.lstm_sequence's threaded steps, in place
            hs, cs, _ = LSTMSequence().recur(xg.reshape(T, 1, G), h0, c0, W_hh, None)
            return hs[1:], hs[-1], cs[-1]
        hs = np.empty((T + 1, H, B), dtype)  # hs[t]: the state before step t
        hs[0] = h0.T
        a = np.empty((G, B), dtype)  # a step's gates
        c, c_next = np.array(c0.T, dtype, order="C"), np.empty((H, B), dtype)
        tc = np.empty((H, B), dtype)  # tanh(c_t)
        compiled = fused.compiled() if fused.fits(W_hh, a, xg) else None
        for t in range(T):
            np.matmul(W_hh, hs[t], out=a)
            if compiled is not None:
                compiled.lstm_preactivate_gm(a.reshape(-1), xg[t].reshape(-1))
            else:
                a += xg[t]
                a[: 2 * H] *= 0.5  # the sigmoid gates i, f and o, halved
                a[3 * H :] *= 0.5
            np.tanh(a, out=a)
            if compiled is not None:
                compiled.lstm_cell_state_gm(a.reshape(-1), c.reshape(-1), c_next.reshape(-1))
            else:
                for gate in (a[: 2 * H], a[3 * H :]):  # (tanh + 1) / 2
                    gate += 1
                    gate *= 0.5
                np.multiply(a[H : 2 * H], c, out=c_next)
                c_next += a[:H] * a[2 * H : 3 * H]
            c, c_next = c_next, c
            np.tanh(c, out=tc)
            np.multiply(a[3 * H :], tc, out=hs[t + 1])
        return hs[1:].transpose(0, 2, 1), hs[-1].T, c.T


def _projection(x: Any, W_ih: Any, bias: Any, parts: int) -> Any:
    """x (T, I) @ W_ih.T + bias for a batch of one. Where the recurrence runs on numba's
    threads next (`parts` of them, more than one), on those threads too
    (few_rows.on_pool: W_ih's rows shared, four of them against four steps' x at a time),
    which also beat BLAS's two threads on these few-row products (benchmarks/RESULTS.md,
    session 75), and leave no BLAS thread spinning on the cores the recurrence needs."""
    if parts > 1 and fused.fits(x, contiguous=False):
        return few_rows.on_pool(fused.compiled(), parts, x, W_ih, bias)
    quiet = parts > 1 and x.size * len(W_ih) <= QUIET_PROJECTION
    with thread_pools.blas_single_threaded() if quiet else contextlib.nullcontext():
        return matmul(x, W_ih.T) + bias


def _one_call_a_layer(B: int, *arrays: Any) -> bool:
    """Whether F.lstm_sequence's recurrence on B rows runs one compiled kernel a layer:
    on several threads (by rows or by units), on one with a batch the serial kernel
    takes, or with a GEMM a step on MKL (recurrent_blas; arrays[0] is W_hh). Those beat
    this op's gate-major steps, five calls a step (LSTM inference at batch 32 on two
    threads: see benchmarks/RESULTS.md, session 54)."""
    if not fused.fits(*arrays) or fused.compiled() is None:
        return False
    return fused.threaded_parts() > 1 or serial_steps(B) or recurrent_blas.on_blas(B, arrays[0])
