"""An LSTM's or a GRU's recurrence as one MKL GEMM and one threaded gate kernel a step
(lamina/fused/numba_blas_steps.py), where MKL runs the products.

numba_threaded's kernels make each step's product h @ W_hh.T themselves, as dot products
in vector registers; on an Intel CPU MKL's GEMM does those multiply-adds much faster,
and the product is most of a step's work. LSTMSequence (GRUSequence alike) takes this
path (on numba's threads, or in a share of lamina's split step on its own thread) where
MKL runs lamina's products and a step's product is one MKL would take
(mkl_blas.MIN_WORK), its weight packed once for all steps (mkl_packed); smaller ones (a
batch of one) stay with numba_threaded, whose threads start no BLAS call a step. The
results agree with those kernels' to float32 rounding: the gates are the same formulas,
only the products' sums run in MKL's order.

In a share of a split step, the backward's products are a GEMM a step, not packed: the
backward runs while every share's activations and gradients are held, and each share
would add its own packed copy of W_hh (half again W_hh's size) to that peak: packed, they
raised the split lstm2 workload's peak memory and saved it little time
(benchmarks/RESULTS.md, session 70).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import parallel
from lamina.fused import mkl_blas, mkl_packed
from lamina.fused.mkl_blas import matmul


def on_blas(rows: int, W_hh: Any) -> bool:
    """Whether a recurrence of `rows` rows by W_hh (G, H) runs a GEMM a step on MKL: where
    MKL runs the products and each step's is at least mkl_blas.MIN_WORK multiply-adds."""
    return rows * W_hh.size >= mkl_blas.MIN_WORK and mkl_blas.backend() == "mkl"


def forward(kernels: Any, acts: Any, hs: Any, cs: Any, tcs: Any, W_hh: Any, bias: Any,
            parts: int, ids: Any, table: Any) -> None:
    """The recurrence over acts (T, B, 4H), as numba_threaded's lstm_forward_* compute it
    (same arguments; ids (T, 0) where acts holds the x-gates), the gates in `parts`
    shares of the rows on numba's threads, or on this thread where `parts` is 1."""
    hg = np.empty(acts.shape[1:], acts.dtype)
    product = _steps_product(W_hh.T, hs.shape[1])
    gates = _gates(kernels, "lstm_gates_forward", parts)
    for t in range(acts.shape[0]):
        product(hs[t], hg)
        gates(acts[t], hg, bias, cs[t], cs[t + 1], tcs[t], hs[t + 1], ids[t], table)


def backward(kernels: Any, acts: Any, cs: Any, tcs: Any, g_hs: Any, gh: Any, gc: Any,
             gg_all: Any, W_hh: Any, parts: int, ids: Any, gb: Any, gtable: Any) -> None:
    """The backward recurrence, as numba_threaded's lstm_backward_rows computes it (same
    arguments, but W_hh itself): gh, the last h's gradient coming in, is each step's
    product gg_all[t + 1] @ W_hh before its gates; gb and gtable hold a sum per share
    (`parts` of them, one where `parts` is 1: the gates on this thread)."""
    product = _steps_product(W_hh, gh.shape[0], pack=not parallel.in_task())
    gates = _gates(kernels, "lstm_gates_backward", parts)
    for t in range(acts.shape[0] - 1, -1, -1):
        if t + 1 < acts.shape[0]:
            product(gg_all[t + 1], gh)
        gates(acts[t], cs[t], tcs[t], g_hs[t], gh, gc, gg_all[t], ids[t], gb, gtable)


def gru_forward(kernels: Any, xg: Any, hs: Any, acts: Any, hns: Any, W_hh: Any, bias: Any,
                parts: int) -> None:
    """The GRU's recurrence, as numba_threaded_gru's gru_forward_* compute it (same
    arguments), the gates on numba's threads (`parts` > 1) or on this thread."""
    hg = np.empty(acts.shape[1:], acts.dtype)
    product = _steps_product(W_hh.T, hs.shape[1])
    gates = _gates(kernels, "gru_gates_forward", parts)
    for t in range(acts.shape[0]):
        product(hs[t], hg)
        gates(bias, xg[t], hg, acts[t], hns[t], hs[t], hs[t + 1])


def gru_backward(kernels: Any, acts: Any, hns: Any, hs: Any, g_hs: Any, carry: Any,
                 via_w: Any, g_x: Any, g_hg: Any, W_hh: Any, parts: int) -> None:
    """The GRU's backward recurrence, as numba_threaded_gru's gru_backward_* compute it
    (same arguments, but W_hh itself): via_w is each step's product g_hg[t + 1] @ W_hh
    before its gates (zeros, as it comes in, for the last step)."""
    product = _steps_product(W_hh, via_w.shape[0], pack=not parallel.in_task())
    gates = _gates(kernels, "gru_gates_backward", parts)
    for t in range(acts.shape[0] - 1, -1, -1):
        if t + 1 < acts.shape[0]:
            product(g_hg[t + 1], via_w)
        gates(acts[t], hns[t], hs[t], g_hs[t], carry, via_w, g_x[t], g_hg[t])


def _gates(kernels: Any, name: str, parts: int) -> Any:
    """numba_blas_steps' gate kernel `name` for every step: the threaded one in `parts`
    shares of the batch's rows, or its serial twin on this thread where `parts` is 1."""
    if parts == 1:
        return getattr(kernels, f"{name}_serial")
    threaded = getattr(kernels, name)
    return lambda *args: threaded(*args, parts)


def _steps_product(b: Any, rows: int, pack: bool = True) -> Any:
    """(a, out) -> out = a @ b for every step's a (rows, K): b packed once for all steps
    (mkl_packed), or a GEMM a step where it cannot be or `pack` is False."""
    packed = mkl_packed.packed(b, rows) if pack else None
    if packed is not None:
        return packed.times
    return lambda a, out: matmul(a, b, out=out)
