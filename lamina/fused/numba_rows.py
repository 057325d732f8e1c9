"""The recurrent kernels' product: rows of W against the rows of x, y[b, c0 + j] +=
W[r0 + j] . x[b], in blocks whose sums stay in vector registers while a pass over K
feeds them all (numba_threaded's LSTM and GRU steps call it on each thread's rows;
rows_product runs it alone, W's rows shared over numba's threads, for a layer's product
on a few rows: lamina.fused.few_rows).

The block is four rows of W by four rows of x (sixteen sums) where the CPU has AVX-512's
32 vector registers, and four by two (eight) where it has AVX2's 16: sixteen sums and
the eight vectors they read do not fit in 16 registers, and the spills cost the product
much of its speed (benchmarks/RESULTS.md). numba compiles for the host CPU
and keys its cache by it, so the block chosen here is the one its code was built for.

The kernels that inline this file's functions compile again once it is edited: every
kernel's cache is stale when any kernel file changes (numba_cache.kernels_stamp).
"""

from __future__ import annotations

import numba
import numpy as np

from lamina.fused.numba_cache import jit
from lamina.fused.numba_math import FASTMATH


def _wide_registers() -> bool:
    """Whether the CPU numba compiles for has AVX-512 (32 vector registers)."""
    from llvmlite import binding

    try:
        return bool(binding.get_host_cpu_features().get("avx512f", False))
    except RuntimeError:  # features unknown: the block that fits 16 registers
        return False


WIDE = _wide_registers()  # a constant in the compiled code: one block is compiled
_inline = jit(nogil=True, fastmath=FASTMATH, error_model="numpy",
                     inline="always")
ZERO = np.float32(0.0)


@_inline
def _add4(row, c, s0, s1, s2, s3):  # type: ignore[no-untyped-def]
    row[c] += s0
    row[c + 1] += s1
    row[c + 2] += s2
    row[c + 3] += s3


@_inline
def _one_row(w0, w1, w2, w3, x0, y0, c):  # type: ignore[no-untyped-def]
    """Four rows of W against one row of x."""
    s0 = s1 = s2 = s3 = ZERO
    for k in range(len(x0)):
        u = x0[k]
        s0 += w0[k] * u
        s1 += w1[k] * u
        s2 += w2[k] * u
        s3 += w3[k] * u
    _add4(y0, c, s0, s1, s2, s3)


@_inline
def _two_rows(w0, w1, w2, w3, x0, x1, y, b, c):  # type: ignore[no-untyped-def]
    """Four rows of W against two of x: eight sums."""
    s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = ZERO
    for k in range(len(x0)):
        a0, a1, a2, a3 = w0[k], w1[k], w2[k], w3[k]
        u = x0[k]
        s00 += a0 * u
        s01 += a1 * u
        s02 += a2 * u
        s03 += a3 * u
        u = x1[k]
        s10 += a0 * u
        s11 += a1 * u
        s12 += a2 * u
        s13 += a3 * u
    _add4(y[b], c, s00, s01, s02, s03)
    _add4(y[b + 1], c, s10, s11, s12, s13)


@_inline
def _four_rows(w0, w1, w2, w3, x0, x1, x2, x3, y, b, c):  # type: ignore[no-untyped-def]
    """Four rows of W against four of x: sixteen sums, each load feeding four products."""
    s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = ZERO
    s20 = s21 = s22 = s23 = s30 = s31 = s32 = s33 = ZERO
    for k in range(len(x0)):
        a0, a1, a2, a3 = w0[k], w1[k], w2[k], w3[k]
        u = x0[k]
        s00 += a0 * u
        s01 += a1 * u
        s02 += a2 * u
        s03 += a3 * u
        u = x1[k]
        s10 += a0 * u
        s11 += a1 * u
        s12 += a2 * u
        s13 += a3 * u
        u = x2[k]
        s20 += a0 * u
        s21 += a1 * u
        s22 += a2 * u
        s23 += a3 * u
        u = x3[k]
        s30 += a0 * u
        s31 += a1 * u
        s32 += a2 * u
        s33 += a3 * u
    _add4(y[b], c, s00, s01, s02, s03)
    _add4(y[b + 1], c, s10, s11, s12, s13)
    _add4(y[b + 2], c, s20, s21, s22, s23)
    _add4(y[b + 3], c, s30, s31, s32, s33)


@_inline
def rows_times(W, r0, n, x, y, c0):  # type: ignore[no-untyped-def]
    """y[b, c0 + j] += W[r0 + j] . x[b] for j < n and every row b of x: four rows of W
    against a block of rows of x at a time (see the module's note), the rows of x left
    over one at a time, then the rows of W left over one at a time."""
    B = x.shape[0]
    step = 4 if WIDE else 2
    j = 0
    while j + 4 <= n:
        w0, w1, w2, w3 = W[r0 + j], W[r0 + j + 1], W[r0 + j + 2], W[r0 + j + 3]
        c = c0 + j
        b = 0
        while b + step <= B:
            if WIDE:
                _four_rows(w0, w1, w2, w3, x[b], x[b + 1], x[b + 2], x[b + 3], y, b, c)
            else:
                _two_rows(w0, w1, w2, w3, x[b], x[b + 1], y, b, c)
            b += step
        while b < B:
            _one_row(w0, w1, w2, w3, x[b], y[b], c)
            b += 1
        j += 4
    for jj in range(j, n):
        w0, c = W[r0 + jj], c0 + jj
        for b in range(B):
            s = ZERO
            for k in range(x.shape[1]):
                s += w0[k] * x[b, k]
            y[b, c] += s


@_inline
def set_rows_times(W, r0, n, x, y, c0):  # type: ignore[no-untyped-def]
    """y[b, c0 + j] = W[r0 + j] . x[b]: rows_times into those columns of y, zeroed."""
    for b in range(y.shape[0]):
        y[b, c0:c0 + n] = ZERO
    rows_times(W, r0, n, x, y, c0)


@jit(nogil=True, fastmath=FASTMATH, error_model="numpy", parallel=True)
def rows_product(x, W, y, parts):  # type: ignore[no-untyped-def]
    """y (B, N) += x (B, K) @ W.T for W (N, K), W's rows in `parts` shares, one a thread
    (numba's pool): a product on a few rows of x (a layer at batch 1) reads all of W once
    and little else, so it runs at the speed memory feeds W, which two cores' loads feed
    faster than one."""
    N = W.shape[0]
    for p in numba.prange(parts):
        r0, r1 = p * N // parts, (p + 1) * N // parts
        rows_times(W, r0, r1 - r0, x, y, r0)
