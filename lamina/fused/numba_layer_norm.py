"""The compiled kernels of layer norm over rows, forward and backward. Re-exported by
numba_kernels, the namespace `lamina.fused.compiled()` returns.

A row's sums run in float32 over the row's 1-D view, in as many partial sums as the
vectors are wide (fastmath's reassociation): a row is a few hundred numbers, so they
stay within float32 rounding of the float64 sums, as PyTorch's float32 kernels do. Sums
over many rows (the weight's and bias's gradients) go into float32 blocks of
BLOCK_ROWS rows, each added to the float64 total: float64 all the way doubled the
vectors' work and kept the kernels at well over twice a copy's time."""

from __future__ import annotations

import math

import numpy as np

from lamina.fused.numba_math import kernel

ZERO = np.float32(0.0)
ONE = np.float32(1.0)
BLOCK_ROWS = 64


@kernel
def layer_norm(x, w, b, eps, y, mean, invstd):  # type: ignore[no-untyped-def]
    """Each row of x (R, D) to zero mean and unit variance, xhat = (x - mean) * invstd,
    then y = xhat * w + b (w, b of D; ones and zeros for none); each row's mean and 1 /
    std into mean and invstd (R,), from which the backward makes xhat again: the pass is
    bound by its stores, and xhat would be a second array to write (benchmarks/RESULTS.md).
    The variance is the centred rows' (two passes over a row still in cache)."""
    rows, d = x.shape
    size = np.float32(d)
    for r in range(rows):
        xr, yr = x[r], y[r]
        total = ZERO
        for j in range(d):
            total += xr[j]
        mu = total / size
        sq = ZERO
        for j in range(d):
            c = xr[j] - mu
            sq += c * c
        inv = ONE / np.float32(math.sqrt(sq / size + np.float32(eps)))
        mean[r], invstd[r] = mu, inv
        for j in range(d):
            yr[j] = (xr[j] - mu) * inv * w[j] + b[j]


@kernel
def layer_norm_backward(gy, x, mean, invstd, w, gx, gw, gb):  # type: ignore[no-untyped-def]
    """gx = invstd * (g - mean(g) - xhat * mean(g * xhat)) per row, g = gy * w and xhat =
    (x - mean) * invstd as layer_norm made it; adds this piece's sum(gy * xhat) and
    sum(gy) over rows into gw and gb (float64, D)."""
    rows, d = gy.shape
    size = np.float32(d)
    block_w, block_b = np.zeros(d, np.float32), np.zeros(d, np.float32)
    for r in range(rows):
        m, inv = mean[r], invstd[r]
        xr, gr, gxr = x[r], gy[r], gx[r]
        sg = ZERO
        sgx = ZERO
        for j in range(d):
            h = (xr[j] - m) * inv
            g = gr[j] * w[j]
            sg += g
            sgx += g * h
            block_w[j] += gr[j] * h
            block_b[j] += gr[j]
        if r % BLOCK_ROWS == BLOCK_ROWS - 1 or r == rows - 1:
            for j in range(d):
                gw[j] += block_w[j]
                gb[j] += block_b[j]
                block_w[j] = ZERO
                block_b[j] = ZERO
        mg, mgx = sg / size, sgx / size
        for j in range(d):
            gxr[j] = inv * (gr[j] * w[j] - mg - (xr[j] - m) * inv * mgx)
