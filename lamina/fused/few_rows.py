"""Products on a few rows, x (R, K) @ W.T for a layer's weight W (N, K): a layer at batch
1 or a handful, a generated token's step. Re-exported by lamina.fused.

A few rows give BLAS's GEMM little arithmetic for all of W that it reads, so the speed
at which memory feeds W sets its time, and MKL's and OpenBLAS's kernels for such shapes
leave much of that speed unused. numba_rows.rows_product shares W's rows between the
cores, each reading its share once, four rows of W against every row of x at a time.
Up to eight rows it ran faster than the BLAS product it replaces on every layer measured;
from about sixteen rows BLAS's blocking for the cache wins (benchmarks/RESULTS.md,
session 72). With one thread BLAS's kernels stay: this one's gain is the second core's
loads. So they do where OpenMP's threads sleep between a step's ops (beside OpenBLAS,
thread_pools.openmp_stays_awake): each product then waits for its second thread to wake,
and a batch-1 MLP's two large layers ran slower than on OpenBLAS (benchmarks/RESULTS.md,
session 73).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused as _fused
from lamina import thread_pools

ROWS = 8  # the most rows of x a product here takes
# The fewest weights: below, the second thread's start costs more than its share saves,
# the more so with the caches cold from the larger layer before (an MLP's last layer).
MIN_WEIGHTS = 1 << 17


def row_product(x: Any, W: Any, add: Any = None, out: Any = None) -> Any:
    """x (R, K) @ W.T (+ add, a row of N) for R up to ROWS and float32 x and W (N, K) with
    W C-contiguous, into `out` (a C-contiguous (R, N) array) or a new array; None where it
    does not run here (numba not running or not worth its load for so small a W, one
    thread or a pool that sleeps between ops, other dtypes or layouts), the caller's BLAS
    product then."""
    if (not thread_pools.openmp_stays_awake() or not _fused.fits(x, contiguous=False)
            or not _fused.fits(W) or x.ndim != 2 or W.ndim != 2 or len(x) > ROWS
            or W.size < MIN_WEIGHTS or x.shape[1] != W.shape[1] or (out is not None and (
                not _fused.fits(out) or out.shape != (len(x), len(W))))):
        return None
    kernels = _fused.compiled_for(W.size)  # loads numba for a large W, as im2col does
    if kernels is None:
        return None
    parts = _fused.threaded_parts()
    if parts < 2:
        return None
    return on_pool(kernels, parts, x, W, add, out)


def on_pool(kernels: Any, parts: int, x: Any, W: Any, add: Any = None, out: Any = None
            ) -> Any:
    """x @ W.T (+ add) by kernels.rows_product, W's rows in `parts` shares on numba's
    pool, into `out` or a new array, with no check of its own: row_product's, or the
    caller's (a batch-1 LSTM's projection, whose recurrence runs on that pool next)."""
    y = np.empty((len(x), len(W)), np.float32) if out is None else out
    if add is None:
        y.fill(0.0)
    else:
        np.copyto(y, add)
    kernels.rows_product(np.ascontiguousarray(x), W, y, parts)
    return y
