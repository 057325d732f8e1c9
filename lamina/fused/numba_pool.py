"""The compiled kernels of max pooling over 2x2 windows at stride 2, the common
`MaxPool2d(2)`: forward writes the maximum and its window index in one pass over the input,
backward writes each window's four gradients in one pass. Re-exported by numba_kernels,
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
I0, I1, I2, I3 = (np.uint8(k) for k in range(4))
NONE = np.uint8(255)  # no index yet (windows have at most 255 elements: ConvMaxPool)


@kernel
def max_pool_2x2(x, y, idx):  # type: ignore[no-untyped-def]
    """y (P, OH, OW) = the maximum of each 2x2 window of x (P, H, W) at stride 2, idx its
    place in the window (0 to 3, row-major). Indexed in full, not through row views, which
    cost numba more here than they save."""
    p_, oh, ow = y.shape
    for p in range(p_):
        for r in range(oh):
            for c in range(ow):
                best, arg = x[p, 2 * r, 2 * c], I0
                v = x[p, 2 * r, 2 * c + 1]
                take = v > best or v != v
                best, arg = (v, I1) if take else (best, arg)
                v = x[p, 2 * r + 1, 2 * c]
                take = v > best or v != v
                best, arg = (v, I2) if take else (best, arg)
                v = x[p, 2 * r + 1, 2 * c + 1]
                take = v > best or v != v
                y[p, r, c], idx[p, r, c] = (v, I3) if take else (best, arg)


@kernel
def max_pool_2x2_backward(gy, idx, gx):  # type: ignore[no-untyped-def]
    """gx (P, H, W) = gy (P, OH, OW) at each window's idx, zero at its three other places;
    rows and columns past 2 * OH and 2 * OW are left as they are."""
    p_, oh, ow = gy.shape
    for p in range(p_):
        for r in range(oh):
            for c in range(ow):
                v, k = gy[p, r, c], idx[p, r, c]
                gx[p, 2 * r, 2 * c] = v if k == I0 else ZERO
                gx[p, 2 * r, 2 * c + 1] = v if k == I1 else ZERO
                gx[p, 2 * r + 1, 2 * c] = v if k == I2 else ZERO
                gx[p, 2 * r + 1, 2 * c + 1] = v if k == I3 else ZERO


@kernel
def max_of_blocks(mem, y, idx):  # type: ignore[no-untyped-def]
    """y (O, C) = the maximum over k of the blocks mem[:, k] (mem (O, K, C)), idx its k.
    Two passes over each block, the maximum then its index, each choice a select on
    comparisons of one width: one pass choosing both, a branch an element on random data,
    ran six times slower."""
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
