"""The compiled kernels of the LSTM's and the GRU's recurrences, beside each step's
recurrent GEMM (which stays BLAS's) and NumPy's SIMD tanh between them. Re-exported by
numba_kernels, the namespace `lamina.fused.compiled()` returns.

The GEMM gives a step's h-gates transposed, (G, B) = W_hh @ h.T: with a batch far
smaller than W_hh's rows, BLAS runs that orientation faster, and the kernels read it so.
A sigmoid gate is left halved before the tanh, then mapped as (t + 1) / 2:
s(v) = (tanh(v / 2) + 1) / 2, as the NumPy code computes it."""

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


@kernel
def gru_preactivate(x, hg, bias, a, hn):  # type: ignore[no-untyped-def]
    """From a step's x-gates x (B, 3H) and h-gates hg.T (hg = W_hh @ h.T, (3H, B)), plus
    b_hh (3H,; zeros for none): r and z pre-activations, halved, into a[:, :2H], and
    hn = h W_hn.T + b_hn (B, H), which r gates in n."""
    b_, g_ = x.shape
    h = g_ // 3
    for b in range(b_):
        for k in range(2 * h):
            a[b, k] = (x[b, k] + hg[k, b] + bias[k]) * HALF
        for j in range(h):
            hn[b, j] = hg[2 * h + j, b] + bias[2 * h + j]


@kernel
def gru_new_gate(a, x, hn):  # type: ignore[no-untyped-def]
    """After the tanh of a[:, :2H]: r and z as (t + 1) / 2, in place, and n's
    pre-activation xn + r * hn into a[:, 2H:]."""
    b_, g_ = a.shape
    h = g_ // 3
    for b in range(b_):
        for j in range(h):
            r = (a[b, j] + ONE) * HALF
            a[b, j] = r
            a[b, h + j] = (a[b, h + j] + ONE) * HALF
            a[b, 2 * h + j] = x[b, 2 * h + j] + r * hn[b, j]


@kernel
def gru_state(a, h_prev, h_next):  # type: ignore[no-untyped-def]
    """After the tanh of n: h = n + z * (h_prev - n), PyTorch's form."""
    b_, g_ = a.shape
    h = g_ // 3
    for b in range(b_):
        for j in range(h):
            n = a[b, 2 * h + j]
            h_next[b, j] = n + a[b, h + j] * (h_prev[b, j] - n)


@kernel
def gru_backward_step(a, hn, h_prev, g_h, carry, via_w, gx, gg):  # type: ignore[no-untyped-def]
    """One step of the GRU's backward from its gates a (B, 3H; r, z, n activated), hn and
    h_prev: the state's gradient dh = g_h + carry + via_w (the step's output gradient,
    the next step's through z, and its through W_hh, a GEMM outside), the x-gates'
    gradients into gx and the h-gates' into gg (B, 3H), and carry = dh * z."""
    b_, g_ = a.shape
    h = g_ // 3
    for b in range(b_):
        for j in range(h):
            r, z, n = a[b, j], a[b, h + j], a[b, 2 * h + j]
            dh = g_h[b, j] + carry[b, j] + via_w[b, j]
            dn = dh * (ONE - z) * (ONE - n * n)
            dz = dh * (h_prev[b, j] - n) * z * (ONE - z)
            dr = dn * hn[b, j] * r * (ONE - r)
            gx[b, j], gx[b, h + j], gx[b, 2 * h + j] = dr, dz, dn
            gg[b, j], gg[b, h + j], gg[b, 2 * h + j] = dr, dz, dn * r
            carry[b, j] = dh * z
