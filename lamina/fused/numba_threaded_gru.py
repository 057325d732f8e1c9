"""The GRU's recurrence on several threads, as numba_threaded.py runs the LSTM's: at every
step, each thread computes its share of the hidden units' rows of the recurrent GEMM, then
their gates and new state, keeping its rows of W_hh in its own cache from step to step.
Re-exported by numba_kernels. PyTorch's formulas, as lamina/functions/recurrent_gru.py:
r = s(xr + hr), z = s(xz + hz), n = tanh(xn + r * hn), h = n + z * (h_prev - n)."""

from __future__ import annotations

import numba
import numpy as np

from lamina.fused.numba_barrier import shares, wait
from lamina.fused.numba_math import sigmoid32, tanh32
from lamina.fused.numba_recurrent import gru_unit_grads
from lamina.fused.numba_rows import set_rows_times
from lamina.fused.numba_threaded import _inline, threaded, three_gates


@_inline
def _step_share(W_hh, bias, x, h, hg, a, hn, h_next, u0, u1):  # type: ignore[no-untyped-def]
    """One GRU step for the hidden units [u0, u1): their rows of h @ W_hh.T into hg
    (B, 3H), then r, z and n into a (B, 3H), hn = hg_n + b_hn (B, H) and the new state."""
    B, G = a.shape
    H = G // 3
    for q in range(3):
        set_rows_times(W_hh, q * H + u0, u1 - u0, h, hg, q * H + u0)
    for b in range(B):
        activate_units(bias, x[b], hg[b], a[b], hn[b], h[b], h_next[b], u0, u1)


@_inline
def activate_units(bias, x, hg, a, hn, h, h_next, u0, u1):  # type: ignore[no-untyped-def]
    """The units [u0, u1) of one row's GRU step, from its x-gates x and h-gates hg (3H,)
    and bias: r, z and n into a (3H,), hn = hg_n + b_hn and the new state h_next (H,)."""
    H = a.shape[0] // 3
    br, bz, bn = three_gates(bias, H, u0, u1)
    xr, xz, xn = three_gates(x, H, u0, u1)
    gr, gz, gn = three_gates(hg, H, u0, u1)
    ar, az, an = three_gates(a, H, u0, u1)
    hp, hr, hnr = h[u0:u1], h_next[u0:u1], hn[u0:u1]
    for j in range(u1 - u0):
        r = sigmoid32(xr[j] + gr[j] + br[j])
        z = sigmoid32(xz[j] + gz[j] + bz[j])
        m = gn[j] + bn[j]
        n = tanh32(xn[j] + r * m)
        ar[j] = r
        az[j] = z
        an[j] = n
        hnr[j] = m
        hr[j] = n + z * (hp[j] - n)


@threaded
def gru_forward_threaded(W_hh, bias, xg, hs, acts, hns, parts):  # type: ignore[no-untyped-def]
    """A GRU layer's recurrence, each step in `parts` shares of the hidden units. W_hh
    (3H, H), bias (3H,; zeros for none), the x-gates xg (T, B, 3H); hs (T + 1, B, H) holds
    h0 in [0] and gets each step's state; acts (T, B, 3H) gets r, z and n, hns (T, B, H)
    each step's hn, as F.gru_sequence keeps them for the backward."""
    T, B, G = acts.shape
    H = G // 3
    hg = np.empty((B, G), acts.dtype)  # a step's h-gates, each share writing its columns
    sync = np.zeros(4, np.int64)
    for p in numba.prange(parts):  # one region; the shares meet after each step
        q0, q1, together = shares(sync, p, parts)
        generation = 0
        for t in range(T):
            for q in range(q0, q1):
                _step_share(W_hh, bias, xg[t], hs[t], hg, acts[t], hns[t], hs[t + 1],
                            q * H // parts, (q + 1) * H // parts)
            if together and t + 1 < T:  # the next step needs all of h
                generation = wait(sync, parts, generation)


@threaded
def gru_forward_rows(W_hh, bias, xg, hs, acts, hns, parts):  # type: ignore[no-untyped-def]
    """gru_forward_threaded with the batch's rows shared instead of the units: each thread
    runs its rows through every step (numba_threaded.lstm_forward_rows)."""
    T, B, G = acts.shape
    H = G // 3
    hg = np.empty((B, G), acts.dtype)
    for p in numba.prange(parts):
        b0, b1 = p * B // parts, (p + 1) * B // parts
        for t in range(T):
            _step_share(W_hh, bias, xg[t, b0:b1], hs[t, b0:b1], hg[b0:b1], acts[t, b0:b1],
                        hns[t, b0:b1], hs[t + 1, b0:b1], 0, H)


@_inline
def backward_share(W_t, gg_next, a, hn, h_prev, g_h, carry, via_w, gx, gg, u0, u1):  # type: ignore[no-untyped-def]
    """One step of the GRU's backward for the hidden units [u0, u1): via_w's columns for
    them become gg_next @ W_hh's (W_t = W_hh.T; left as they are where gg_next is empty,
    the last step's), then each unit through numba_recurrent.gru_unit_grads with
    dh = g_h + carry + via_w: the x-gates' gradients into gx, the h-gates' into gg, and
    carry = dh * z."""
    B, G = a.shape
    H = G // 3
    if gg_next.shape[0] > 0:
        set_rows_times(W_t, u0, u1 - u0, gg_next, via_w, u0)
    for b in range(B):
        ar, az, an = three_gates(a[b], H, u0, u1)
        xr, xz, xn = three_gates(gx[b], H, u0, u1)
        hr, hz, hn_ = three_gates(gg[b], H, u0, u1)
        hnr, hp, outr = hn[b, u0:u1], h_prev[b, u0:u1], g_h[b, u0:u1]
        cr, wr = carry[b, u0:u1], via_w[b, u0:u1]
        for j in range(u1 - u0):
            dr, dz, dn, dnr, c = gru_unit_grads(ar[j], az[j], an[j], hnr[j], hp[j],
                                                outr[j] + cr[j] + wr[j])
            xr[j] = dr
            xz[j] = dz
            xn[j] = dn
            hr[j] = dr
            hz[j] = dz
            hn_[j] = dnr
            cr[j] = c


@threaded
def gru_backward_threaded(W_t, acts, hns, hs, g_hs, carry, via_w, g_x, g_hg, parts):  # type: ignore[no-untyped-def]
    """The GRU's backward recurrence, each step in `parts` shares of the hidden units, from
    the forward's acts, hns and hs; W_t is W_hh.T (H, 3H). carry (B, H) comes in as the
    last state's gradient, via_w (B, H) as zeros; they leave as the parts of h0's
    gradient through z and (for the first step's own) scratch: h0's gradient is carry +
    g_hg[0] @ W_hh, a GEMM outside. g_hs (T, B, H): each step's output gradient; the x-
    and h-gates' gradients of every step go into g_x and g_hg (T, B, 3H)."""
    T, B, G = acts.shape
    H = G // 3
    sync = np.zeros(4, np.int64)
    for p in numba.prange(parts):  # one region, as in gru_forward_threaded
        q0, q1, together = shares(sync, p, parts)
        generation = 0
        for t in range(T - 1, -1, -1):
            after = g_hg[t + 1] if t + 1 < T else g_hg[t, :0]
            for q in range(q0, q1):
                backward_share(W_t, after, acts[t], hns[t], hs[t], g_hs[t], carry, via_w,
                               g_x[t], g_hg[t], q * H // parts, (q + 1) * H // parts)
            if together and t > 0:  # the step before reads all of g_hg[t]
                generation = wait(sync, parts, generation)


@threaded
def gru_backward_rows(W_t, acts, hns, hs, g_hs, carry, via_w, g_x, g_hg, parts):  # type: ignore[no-untyped-def]
    """gru_backward_threaded with the batch's rows shared instead of the units (see
    gru_forward_rows): the same arguments, the same results."""
    T, B, G = acts.shape
    H = G // 3
    for p in numba.prange(parts):
        b0, b1 = p * B // parts, (p + 1) * B // parts
        for t in range(T - 1, -1, -1):
            after = g_hg[t + 1, b0:b1] if t + 1 < T else g_hg[t, b0:b0]
            backward_share(W_t, after, acts[t, b0:b1], hns[t, b0:b1], hs[t, b0:b1],
                           g_hs[t, b0:b1], carry[b0:b1], via_w[b0:b1], g_x[t, b0:b1],
                           g_hg[t, b0:b1], 0, H)
