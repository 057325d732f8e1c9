"""The compiled kernels of max pooling over 2x2 windows at stride 2, the common
`MaxPool2d(2)`: forward writes the maxima and their window indices a row of windows at a
time, backward writes each window's four gradients in one pass. Re-exported by numba_kernels,
the namespace `lamina.fused.compiled()` returns.

The window is fixed in the code: with its size a run-time value, the inner loops are too
short to unroll and run several times slower than NumPy's strided planes, so other windows
keep NumPy's code. The choice among a window's elements is PyTorch's: the first maximum,
or the last NaN where there is one.

A plan's convolution fused with its pooling (lamina.plan.kernels.ConvMaxPool) writes
window element k of every window as one contiguous block: `max_of_blocks` and
`scatter_blocks` run over those, any window size, their inner loops contiguous.
"""

from __future__ import annotations

import numpy as np

from lamina.fused.numba_math import kernel

ZERO = np.float32(0.0)
I1, I2 = np.uint8(1), np.uint8(2)
NONE = np.uint8(255)  # no index yet: ConvMaxPool's windows have at most 255 elements,
# so their indices stop at 254


@kernel
def max_pool_2x2(x, y, idx):  # type: ignore[no-untyped-def]
    """y (P, OH, OW) = the maximum of each 2x2 window of x (P, H, W) at stride 2, idx its
    place in the window (0 to 3, row-major). A row of windows at a time: the maxima, each
    a select on comparisons of one width, then their places by counting, no select
    chains: the first maximum's place is how many elements before it differ from it, the
    last NaN's how many of the elements after the first are NaN or have one after them.
    Branches, or chained selects, on every element ran several times slower."""
    p_, oh, ow = y.shape
    for p in range(p_):
        for r in range(oh):
            a, b = x[p, 2 * r], x[p, 2 * r + 1]
            yr, ir = y[p, r], idx[p, r]
            for c in range(ow):
                v0, v1, v2, v3 = a[2 * c], a[2 * c + 1], b[2 * c], b[2 * c + 1]
                m = v1 if (v1 > v0) | (v1 != v1) else v0
                m = v2 if (v2 > m) | (v2 != v2) else m
                yr[c] = v3 if (v3 > m) | (v3 != v3) else m
            for c in range(ow):
                v0, v1, v2, v3 = a[2 * c], a[2 * c + 1], b[2 * c], b[2 * c + 1]
                m = yr[c]
                d0 = v0 != m  # before the first maximum: all differ from it
                d1 = d0 & (v1 != m)
                d2 = d1 & (v2 != m)
                n3 = v3 != v3  # at or before the last NaN: a NaN here or after
                n2 = n3 | (v2 != v2)
                n1 = n2 | (v1 != v1)
                ir[c] = (np.uint8(n1) + np.uint8(n2) + np.uint8(n3)) if m != m else \
                    (np.uint8(d0) + np.uint8(d1) + np.uint8(d2))


@kernel
def max_pool_2x2_backward(gy, idx, gx):  # type: ignore[no-untyped-def]
    """gx (P, H, W) = gy (P, OH, OW) at each window's idx, zero at its three other places;
    rows and columns past 2 * OH and 2 * OW are left as they are. Each pair of rows is
    zeroed in one contiguous pass, then each window's gradient stored at its place: four
    selected stores a window, strided, ran several times slower."""
    p_, oh, ow = gy.shape
    for p in range(p_):
        for r in range(oh):
            g, k = gy[p, r], idx[p, r]
            a, b = gx[p, 2 * r], gx[p, 2 * r + 1]
            for j in range(2 * ow):
                a[j] = ZERO
                b[j] = ZERO
            for c in range(ow):
                row = a if k[c] < I2 else b
                row[2 * c + (k[c] & I1)] = g[c]


@kernel
def max_of_blocks(mem, y, idx):  # type: ignore[no-untyped-def]
    """y (O, C) = the maximum over k of the blocks mem[:, k] (mem (O, K, C)), idx its k.
    Two passes over each block, the maximum then its index, each choice a select on
    comparisons of one width: one pass choosing both, a branch an element on random data,
    ran several times slower."""
    o_, k_, c_ = mem.shape
    for o in range(o_):
        yo, io = y[o], idx[o]
        yo[:] = mem[o, 0]
        for k in range(1, k_):
            mk = mem[o, k]
            for c in range(c_):
                v, m = mk[c], yo[c]
                yo[c] = v if (v > m) | (v != v) else m
        io[:] = NONE
        for k in range(k_):
            kk, mk = np.uint8(k), mem[o, k]
            for c in range(c_):
                v, m, i = mk[c], yo[c], io[c]
                io[c] = kk if ((m == m) & (i == NONE) & (v == m)) | (v != v) else i


@kernel
def scatter_blocks(gy, idx, gmem):  # type: ignore[no-untyped-def]
    """gmem[:, k] (gmem (O, K, C)) = gy (O, C) where idx is k, else zero."""
    o_, k_, c_ = gmem.shape
    for o in range(o_):
        for k in range(k_):
            kk = np.uint8(k)
            for c in range(c_):
                gmem[o, k, c] = gy[o, c] if idx[o, c] == kk else ZERO
