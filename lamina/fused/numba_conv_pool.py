"""A convolution with few input channels and the max pooling that reads it, computed
directly: a plan's ConvMaxPool (lamina/plan/kernels/conv_pool.py) on a network's first
layer (one to three image channels, a 3x3 or 5x5 kernel).

There the im2col matrix has a few rows and a column per output position, its GEMM sums
over nine or so terms, and the convolution's output is four times the pooled one: the
time goes to writing and reading those arrays, not to arithmetic. Here the input comes
split into its pooling phases: xph[c, r, s, n] holds the rows r, r + QH, ... and columns
s, s + QW, ... of image n's padded channel c, the images one after another. Then window
element (a, b) of every pooling window of an output channel, over all the images, is
one plane, and each of the C*KH*KW terms adds a phase plane shifted by whole rows and
columns: one loop over contiguous memory, all the images long, "wide" (with the phase
planes' rows and images: the columns and rows past an image's pooled map are computed
and never read). The maximum over the window's planes is taken element by element as
they come; only the pooled output and each maximum's window index are written. The
weight's gradient is the same loops backward: per window element, the pooled gradient
where that element was chosen, dotted with each shifted phase plane. Stride 1 only.

The choice among a window's elements is max_of_blocks' (numba_pool.py): the first
maximum, or the last NaN. Each element's choice is a select on comparisons of one width:
the window indices are chosen as int32, beside the float32 maxima, and only the pooled
output's are bytes; chosen as bytes, LLVM left the choice a branch an element, which on
unordered values ran the forward several times slower. The sums run in another order
than a GEMM's: the results agree with the im2col path to float32 rounding. Re-exported
by numba_kernels.
"""

from __future__ import annotations

import numpy as np

from lamina.fused.numba_math import kernel, scalar


@scalar
def _term_start(xph, c, di, dj, n0):  # type: ignore[no-untyped-def]
    """Where, in xph's memory, the phase plane that a convolution term at input offset
    (di, dj) reads for window element 0's position starts: channel c, phase (di % QH,
    dj % QW), image n0, shifted by whole rows and columns of the phase plane."""
    qh, qw, n_, u_, v_ = xph.shape[1], xph.shape[2], xph.shape[3], xph.shape[4], xph.shape[5]
    return (((c * qh + di % qh) * qw + dj % qw) * n_ + n0) * u_ * v_ + (di // qh) * v_ + dj // qw


@kernel
def conv_max_pool(xph, w3, bias, kh, kw, dh, dw, ph_n, pw_n, n0, n1, y, idx):  # type: ignore[no-untyped-def]
    """For images n0:n1: y and idx (O, N*PH*PW), the maximum over each QH x QW window (PH
    x PW of them) of conv(x, W) + bias at stride 1 and its window index, from xph (C, QH,
    QW, N, U, V), the padded input split into phases (see the module), and w3, W as
    (O, C, KH*KW)."""
    o_, c_ = w3.shape[0], w3.shape[1]
    qh, qw, u_, v_ = xph.shape[1], xph.shape[2], xph.shape[4], xph.shape[5]
    image = u_ * v_
    length = (n1 - n0 - 1) * image + (ph_n - 1) * v_ + pw_n
    flat = xph.reshape(-1)
    plane = np.empty(length, np.float32)
    best = np.empty(length, np.float32)
    chosen = np.empty(length, np.int32)  # as wide as the values it is chosen by
    for o in range(o_):
        for k in range(qh * qw):
            a, b = k // qw, k % qw
            b0 = bias[o]
            for t in range(length):
                plane[t] = b0
            for c in range(c_):
                for i in range(kh):
                    for j in range(kw):
                        start = _term_start(xph, c, a + i * dh, b + j * dw, n0)
                        src = flat[start:start + length]  # a 1-D slice: cheap to make
                        w = w3[o, c, i * kw + j]
                        for t in range(length):
                            plane[t] += w * src[t]
            if k == 0:
                for t in range(length):
                    best[t] = plane[t]
                    chosen[t] = 0
            else:
                kk = np.int32(k)
                for t in range(length):
                    v, m = plane[t], best[t]
                    take = (v > m) | (v != v)
                    best[t] = v if take else m
                    chosen[t] = kk if take else chosen[t]
        for n in range(n0, n1):
            for p in range(ph_n):
                first, row = (n * ph_n + p) * pw_n, (n - n0) * image + p * v_
                for q in range(pw_n):
                    y[o, first + q] = best[row + q]
                    idx[o, first + q] = np.uint8(chosen[row + q])


@kernel
def conv_max_pool_weight_grad(xph, gy, idx, kh, kw, dh, dw, ph_n, pw_n, n0, n1, gw):  # type: ignore[no-untyped-def]
    """Adds into gw (O, C, KH*KW), float64, the weight gradient from images n0:n1: gy and
    idx (O, N*PH*PW), the pooled output's gradient and conv_max_pool's indices; each
    plane's dot product summed in float32, as a GEMM's."""
    o_, c_ = gw.shape[0], gw.shape[1]
    qh, qw, u_, v_ = xph.shape[1], xph.shape[2], xph.shape[4], xph.shape[5]
    image = u_ * v_
    length = (n1 - n0 - 1) * image + (ph_n - 1) * v_ + pw_n
    flat = xph.reshape(-1)
    g = np.zeros(length, np.float32)  # what lies past each pooled map stays zero
    at = np.zeros(length, np.uint8)
    picked = np.empty(length, np.float32)
    for o in range(o_):
        for n in range(n0, n1):
            for p in range(ph_n):
                first, row = (n * ph_n + p) * pw_n, (n - n0) * image + p * v_
                for q in range(pw_n):
                    g[row + q] = gy[o, first + q]
                    at[row + q] = idx[o, first + q]
        for k in range(qh * qw):
            a, b, kk = k // qw, k % qw, np.uint8(k)
            for t in range(length):
                picked[t] = g[t] if at[t] == kk else np.float32(0.0)
            for c in range(c_):
                for i in range(kh):
                    for j in range(kw):
                        start = _term_start(xph, c, a + i * dh, b + j * dw, n0)
                        src = flat[start:start + length]
                        total = np.float32(0.0)
                        for t in range(length):
                            total += picked[t] * src[t]
                        gw[o, c, i * kw + j] += total
