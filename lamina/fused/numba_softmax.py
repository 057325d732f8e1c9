"""The compiled kernels of softmax and log-softmax over rows: attention's weights (with its
scale and causal mask), a classifier's log-probabilities. Re-exported by numba_kernels, the
namespace `lamina.fused.compiled()` returns.

Each kernel loops over one row's 1-D view: a 2-D index inside the loop costs the
vectorizer, and these loops are short (a row is often 50 to 512 elements).
"""

from __future__ import annotations

import math

import numpy as np

from lamina.fused.numba_math import exp32, kernel

ONE, ZERO = np.float32(1.0), np.float32(0.0)


@kernel
def _row_max(xr, n, scale):  # type: ignore[no-untyped-def]
    """The max of xr[:n] * scale, in eight running maxima: one running max is a chain of
    dependent compares that LLVM keeps scalar (NaN's ordering forbids reordering it), eight
    independent ones vectorize. A NaN is skipped here and reaches the row through its exp."""
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = np.float32(-np.inf)  # an empty row reads nothing
    full = n - n % 8
    for j in range(0, full, 8):
        a0, a1 = max(a0, xr[j] * scale), max(a1, xr[j + 1] * scale)
        a2, a3 = max(a2, xr[j + 2] * scale), max(a3, xr[j + 3] * scale)
        a4, a5 = max(a4, xr[j + 4] * scale), max(a5, xr[j + 5] * scale)
        a6, a7 = max(a6, xr[j + 6] * scale), max(a7, xr[j + 7] * scale)
    top = max(max(max(a0, a1), max(a2, a3)), max(max(a4, a5), max(a6, a7)))
    for j in range(full, n):
        top = max(top, xr[j] * scale)
    return top


@kernel
def softmax_rows(x, y, scale, queries, first, offset):  # type: ignore[no-untyped-def]
    """y = softmax(x * scale) along each row (R, S): the max, then exp (with numba_math's
    exp, which vectorizes), its sum, and the division, each a loop over one row's view (a
    2-D index in the loop costs the vectorizer). With queries > 0, attention's causal mask
    too: row r scores query (first + r) % queries + offset (offset > 0: a block of the
    queries that starts there), which sees keys 0 to that index; the others get 0 and
    cost no exp."""
    rows, s = x.shape
    for r in range(rows):
        n = s if queries == 0 else min(s, (first + r) % queries + 1 + offset)
        xr, yr = x[r], y[r]
        top = _row_max(xr, n, scale)
        for j in range(n):
            yr[j] = exp32(xr[j] * scale - top)
        total = ZERO
        for j in range(n):
            total += yr[j]
        inv = ONE / total
        for j in range(n):
            yr[j] *= inv
        for j in range(n, s):
            yr[j] = ZERO


@kernel
def softmax_backward(y, gy, scale, gx):  # type: ignore[no-untyped-def]
    """gx = scale * y * (gy - sum(y * gy)) along each row (R, S), the sum in float64: the
    gradient of softmax(x * scale)."""
    rows, s = y.shape
    for r in range(rows):
        dot = 0.0
        for j in range(s):
            dot += y[r, j] * gy[r, j]
        d32 = np.float32(dot)
        for j in range(s):
            gx[r, j] = y[r, j] * (gy[r, j] - d32) * scale


@kernel
def log_softmax_rows(x, y):  # type: ignore[no-untyped-def]
    """y = log(softmax(x)) along each row (R, C), as NumPy's code computes it: x - max,
    then minus the log of the sum of its exps. y may be x itself."""
    rows, s = x.shape
    for r in range(rows):
        xr, yr = x[r], y[r]
        top = _row_max(xr, s, ONE)
        for j in range(s):
            yr[j] = xr[j] - top
        total = ZERO
        for j in range(s):
            total += exp32(yr[j])
        shift = np.float32(math.log(total))
        for j in range(s):
            yr[j] -= shift
