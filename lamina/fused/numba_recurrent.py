"""The compiled kernels of the LSTM's recurrence, beside each step's recurrent GEMM (which
stays BLAS's). Re-exported by numba_kernels, the namespace `lamina.fused.compiled()`
returns."""

from __future__ import annotations

import numpy as np

from lamina.fused.numba_math import kernel

HALF, ONE = np.float32(0.5), np.float32(1.0)


@kernel
def lstm_preactivate(a, hg):  # type: ignore[no-untyped-def]
    """a (B, 4H) += hg.T (hg = W_hh @ h.T, (4H, B)), then halved on the sigmoid gates i, f
    and o, so that one tanh over a activates all four: s(x) = (tanh(x / 2) + 1) / 2."""
    b_, g_ = a.shape
    h = g_ // 4
    for b in range(b_):
        for k in range(2 * h):
            a[b, k] = (a[b, k] + hg[k, b]) * HALF
        for k in range(2 * h, 3 * h):
            a[b, k] = a[b, k] + hg[k, b]
        for k in range(3 * h, g_):
            a[b, k] = (a[b, k] + hg[k, b]) * HALF


@kernel
def lstm_cell_state(a, c_prev, c):  # type: ignore[no-untyped-def]
    """After the tanh: the sigmoid gates of a (B, 4H) as (t + 1) / 2, in place, and
    c = f * c_prev + i * g."""
    b_, g_ = a.shape
    h = g_ // 4
    for b in range(b_):
        for j in range(h):
            i = (a[b, j] + ONE) * HALF
            f = (a[b, h + j] + ONE) * HALF
            a[b, j] = i
            a[b, h + j] = f
            a[b, 3 * h + j] = (a[b, 3 * h + j] + ONE) * HALF
            c[b, j] = f * c_prev[b, j] + i * a[b, 2 * h + j]


@kernel
def lstm_backward_step(a, c_prev, tc, g_h, gh, gc, gg):  # type: ignore[no-untyped-def]
    """One step of the LSTM's backward, from its activated gates a (B, 4H), c_prev and
    tanh(c) (B, H): gh += g_h (the step's output gradient), gc += gh * o * (1 - tanh(c)^2),
    the pre-activation gate gradients into gg (B, 4H), then gc *= f (for the step
    before). gh itself is next gg @ W_hh, a GEMM outside."""
    b_, g_ = a.shape
    h = g_ // 4
    for b in range(b_):
        for j in range(h):
            i, f, g, o = a[b, j], a[b, h + j], a[b, 2 * h + j], a[b, 3 * h + j]
            t = tc[b, j]
            dh = gh[b, j] + g_h[b, j]
            dc = gc[b, j] + dh * o * (ONE - t * t)
            gg[b, j] = dc * g * i * (ONE - i)
            gg[b, h + j] = dc * c_prev[b, j] * f * (ONE - f)
            gg[b, 2 * h + j] = dc * i * (ONE - g * g)
            gg[b, 3 * h + j] = dh * t * o * (ONE - o)
            gc[b, j] = dc * f
