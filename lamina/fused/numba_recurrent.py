"""The compiled kernels of the LSTM's and the GRU's recurrences, beside each step's
recurrent GEMM (which stays BLAS's) and NumPy's SIMD tanh between them. Re-exported by
numba_kernels, the namespace `lamina.fused.compiled()` returns.

The GEMM gives a step's h-gates transposed, (G, B) = W_hh @ h.T: with a batch far
smaller than W_hh's rows, BLAS runs that orientation faster, and the kernels read it so.
A sigmoid gate is left halved before the tanh, then mapped as (t + 1) / 2:
s(v) = (tanh(v / 2) + 1) / 2, as the NumPy code computes it."""

from __future__ import annotations

import numpy as np

from lamina.fused.numba_math import kernel, scalar

HALF, ONE = np.float32(0.5), np.float32(1.0)


@kernel
def lstm_preactivate(a, hg, bias):  # type: ignore[no-untyped-def]
    """a (B, 4H) += hg.T + bias (hg = W_hh @ h.T, (4H, B); bias (4H,)), then halved on the
    sigmoid gates i, f and o, so that one tanh over a activates all four:
    s(x) = (tanh(x / 2) + 1) / 2. The bias rides along: a pass of its own would cost as
    much as this one."""
    b_, g_ = a.shape
    h = g_ // 4
    for b in range(b_):
        for k in range(2 * h):
            a[b, k] = (a[b, k] + hg[k, b] + bias[k]) * HALF
        for k in range(2 * h, 3 * h):
            a[b, k] = a[b, k] + hg[k, b] + bias[k]
        for k in range(3 * h, g_):
            a[b, k] = (a[b, k] + hg[k, b] + bias[k]) * HALF


@kernel
def lstm_cell_state(a, c_prev, c):  # type: ignore[no-untyped-def]
    """After the tanh: the sigmoid gates of a (B, 4H) as (t + 1) / 2, in place, and
    c = f * c_prev + i * g. A row of a is its gates end to end, as lstm_cell_state_gm
    reads them."""
    for b in range(a.shape[0]):
        lstm_cell_state_gm(a[b], c_prev[b], c[b])


@scalar
def lstm_unit_grads(i, f, g, o, t, c_prev, dh, dc):  # type: ignore[no-untyped-def]
    """One unit's backward through an LSTM step, from its activated gates, t = tanh(c),
    c_prev, and the gradients reaching h (dh) and c (dc) from after the step: the gate
    pre-activations' gradients di, df, dg, do and c_prev's, as a tuple."""
    dc = dc + dh * o * (ONE - t * t)
    return (dc * g * i * (ONE - i), dc * c_prev * f * (ONE - f), dc * i * (ONE - g * g),
            dh * t * o * (ONE - o), dc * f)


@kernel
def lstm_backward_step(a, c_prev, tc, g_h, gh, gc, gg):  # type: ignore[no-untyped-def]
    """One step of the LSTM's backward, from its activated gates a (B, 4H), c_prev and
    tanh(c) (B, H): gh += g_h (the step's output gradient), gc += gh * o * (1 - tanh(c)^2),
    the pre-activation gate gradients into gg (B, 4H), then gc *= f (for the step
    before). gh itself is next gg @ W_hh, a GEMM outside."""
    b_, g_ = a.shape
    h = g_ // 4
    for b in range(b_):
        ar, gr = a[b], gg[b]
        ai, af, ag, ao = ar[:h], ar[h:2 * h], ar[2 * h:3 * h], ar[3 * h:]
        gi, gf, gG, go = gr[:h], gr[h:2 * h], gr[2 * h:3 * h], gr[3 * h:]
        cp, tr, outr, ghr, gcr = c_prev[b], tc[b], g_h[b], gh[b], gc[b]
        for j in range(h):
            gi[j], gf[j], gG[j], go[j], gcr[j] = lstm_unit_grads(
                ai[j], af[j], ag[j], ao[j], tr[j], cp[j], ghr[j] + outr[j], gcr[j])


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
        ar, xn, hr = a[b], x[b, 2 * h:], hn[b]
        ar_, az, an = ar[:h], ar[h:2 * h], ar[2 * h:]
        for j in range(h):
            r = (ar_[j] + ONE) * HALF
            ar_[j] = r
            az[j] = (az[j] + ONE) * HALF
            an[j] = xn[j] + r * hr[j]


@kernel
def gru_state(a, h_prev, h_next):  # type: ignore[no-untyped-def]
    """After the tanh of n: h = n + z * (h_prev - n), PyTorch's form."""
    b_, g_ = a.shape
    h = g_ // 3
    for b in range(b_):
        az, an, hp, hr = a[b, h:2 * h], a[b, 2 * h:], h_prev[b], h_next[b]
        for j in range(h):
            n = an[j]
            hr[j] = n + az[j] * (hp[j] - n)


@kernel
def gru_backward_step(a, hn, h_prev, g_h, carry, via_w, gx, gg):  # type: ignore[no-untyped-def]
    """One step of the GRU's backward from its gates a (B, 3H; r, z, n activated), hn and
    h_prev: the state's gradient dh = g_h + carry + via_w (the step's output gradient,
    the next step's through z, and its through W_hh, a GEMM outside), the x-gates'
    gradients into gx and the h-gates' into gg (B, 3H), and carry = dh * z."""
    b_, g_ = a.shape
    h = g_ // 3
    for b in range(b_):
        ar, xr, hr = a[b], gx[b], gg[b]
        ar_, az, an = ar[:h], ar[h:2 * h], ar[2 * h:]
        xr_, xz, xn = xr[:h], xr[h:2 * h], xr[2 * h:]
        hr_, hz, hn_ = hr[:h], hr[h:2 * h], hr[2 * h:]
        hnr, hp, outr, cr, wr = hn[b], h_prev[b], g_h[b], carry[b], via_w[b]
        for j in range(h):
            dh = outr[j] + cr[j] + wr[j]
            xr_[j], xz[j], xn[j], hn_[j], cr[j] = gru_unit_grads(
                ar_[j], az[j], an[j], hnr[j], hp[j], dh)
            hr_[j], hz[j] = xr_[j], xz[j]


@scalar
def gru_unit_grads(r, z, n, hn, h_prev, dh):  # type: ignore[no-untyped-def]
    """One unit's backward through a GRU step, from its activated gates, hn (its part of
    h @ W_hn.T + b_hn) and h_prev, given dh reaching its new state: the pre-activation
    gradients of r, z and n, n's h-gate's (dn * r), and the part of dh that reaches
    h_prev through z, as a tuple."""
    dn = dh * (ONE - z) * (ONE - n * n)
    dz = dh * (h_prev - n) * z * (ONE - z)
    return dn * hn * r * (ONE - r), dz, dn, dn * r, dh * z


# -- gate-major steps (lamina.functions.recurrent_layer, inference): a step's gates
# (4H, B), its states (H, B), each gate a contiguous block; the GEMM writes the gates so --

@kernel
def lstm_preactivate_gm(a, xg):  # type: ignore[no-untyped-def]
    """Over flat views of a step's gate-major h-gates a and x-gates xg (4n), n = H * B:
    a = a + xg, halved on the sigmoid gates i, f and o (see lstm_preactivate)."""
    n = a.size // 4
    for k in range(2 * n):
        a[k] = (a[k] + xg[k]) * HALF
    # Loops from 0 over views: one from 2n would index with a signed sum numba wraps,
    # which keeps it from vectorizing (see numba_windows).
    ag, xgg, ao, xgo = a[2 * n:3 * n], xg[2 * n:3 * n], a[3 * n:], xg[3 * n:]
    for k in range(n):
        ag[k] = ag[k] + xgg[k]
    for k in range(n):
        ao[k] = (ao[k] + xgo[k]) * HALF


@kernel
def lstm_cell_state_gm(a, c_prev, c):  # type: ignore[no-untyped-def]
    """After the tanh, over a block of gates i, f, g, o laid end to end, a (4n), and its
    states (n): a gate-major step (4H, B) flattened (n = H * B), or one row of (B, 4H).
    The sigmoid gates i, f, o as (t + 1) / 2 in place, and c = f * c_prev + i * g."""
    n = c.size
    ai, af, ag, ao = a[:n], a[n:2 * n], a[2 * n:3 * n], a[3 * n:]
    for k in range(n):
        i = (ai[k] + ONE) * HALF
        f = (af[k] + ONE) * HALF
        ai[k] = i
        af[k] = f
        ao[k] = (ao[k] + ONE) * HALF
        c[k] = f * c_prev[k] + i * ag[k]
