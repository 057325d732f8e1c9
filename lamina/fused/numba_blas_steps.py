"""The LSTM's and the GRU's gates beside a BLAS product a step: where MKL runs the
products, each step's recurrent GEMM is MKL's (on all cores) and one threaded kernel then
activates the step's gates, each thread with its share of the batch's rows (or, in a
share of lamina's split step, the serial kernel its rows). Re-exported by numba_kernels.

numba_threaded's kernels compute the product themselves, as dot products held in vector
registers. MKL's GEMM does the multiply-adds much faster (its blocking and its packed
operands); the gates, one pass over the step's rows while they are in cache, cost a
fraction of what the products do (benchmarks/RESULTS.md, session 70). So on MKL a step
is one GEMM and one call here, in numba_threaded's and numba_threaded_gru's arithmetic:
the same gate formulas and sums by share (their activate_units and backward_share).
Each threaded kernel takes its serial twin's arguments, then `parts`."""

from __future__ import annotations

import numba

from lamina.fused import numba_threaded_gru as gru
from lamina.fused.numba_cache import jit
from lamina.fused.numba_math import FASTMATH
from lamina.fused.numba_threaded import activate_units, backward_share

__all__ = ["lstm_gates_backward", "lstm_gates_backward_serial", "lstm_gates_forward",
           "lstm_gates_forward_serial", "gru_gates_backward", "gru_gates_backward_serial",
           "gru_gates_forward", "gru_gates_forward_serial"]

threaded = jit(nogil=True, fastmath=FASTMATH, error_model="numpy", parallel=True)
serial = jit(nogil=True, fastmath=FASTMATH, error_model="numpy")
_inline = jit(nogil=True, fastmath=FASTMATH, error_model="numpy", inline="always")


@_inline
def _gates_rows(a, hg, bias, c_prev, c, tc, h_next, b0, b1, ids, table):  # type: ignore[no-untyped-def]
    """The rows [b0, b1) of one LSTM step after its GEMM: the gates a (B, 4H) = x-gates +
    hg (h @ W_hh.T, (B, 4H)) + bias, activated in place, then c = f * c_prev + i * g,
    tc = tanh(c) and h_next = o * tc (B, H). Where ids (B,) is not empty, the x-gates
    are table[ids] (table (V, 4H)), not what a holds."""
    G = a.shape[1]
    for b in range(b0, b1):
        row, src, add = a[b], a[b] if ids.shape[0] == 0 else table[ids[b]], hg[b]
        for k in range(G):
            row[k] = src[k] + add[k]
        activate_units(row, bias, c_prev[b], c[b], tc[b], h_next[b], 0, G // 4)


@_inline
def _grads_rows(a, c_prev, tc, g_h, gh, gc, gg, b0, b1, ids, gb, gtable):  # type: ignore[no-untyped-def]
    """The rows [b0, b1) of one step of the LSTM's backward after its GEMM (gh = the next
    step's gate gradients @ W_hh, or the last h's gradient), as numba_threaded's kernels
    compute them: the gate gradients into gg (B, 4H), gc becomes c_prev's, and the gate
    gradients are added into gb (4H,) and, by ids (B,) unless empty, into gtable's rows."""
    backward_share(gg[b0:b0], gg[b0:b0], a[b0:b1], c_prev[b0:b1], tc[b0:b1], g_h[b0:b1],
                   gh[b0:b1], gc[b0:b1], gg[b0:b1], 0, a.shape[1] // 4, ids[b0:b1], gb,
                   gtable)


@threaded
def lstm_gates_forward(a, hg, bias, c_prev, c, tc, h_next, ids, table, parts):  # type: ignore[no-untyped-def]
    """_gates_rows over the batch, in `parts` shares of its rows on numba's threads."""
    B = a.shape[0]
    for p in numba.prange(parts):
        _gates_rows(a, hg, bias, c_prev, c, tc, h_next, p * B // parts, (p + 1) * B // parts,
                    ids, table)


@serial
def lstm_gates_forward_serial(a, hg, bias, c_prev, c, tc, h_next, ids, table):  # type: ignore[no-untyped-def]
    """_gates_rows over the batch on the calling thread (lamina on one thread, a split share)."""
    _gates_rows(a, hg, bias, c_prev, c, tc, h_next, 0, a.shape[0], ids, table)


@threaded
def lstm_gates_backward(a, c_prev, tc, g_h, gh, gc, gg, ids, gb, gtable, parts):  # type: ignore[no-untyped-def]
    """_grads_rows over the batch in `parts` shares of its rows on numba's threads, share
    p adding into gb[p] (4H,) and gtable[p] (V, 4H)."""
    B = a.shape[0]
    for p in numba.prange(parts):
        _grads_rows(a, c_prev, tc, g_h, gh, gc, gg, p * B // parts, (p + 1) * B // parts, ids,
                    gb[p], gtable[p])


@serial
def lstm_gates_backward_serial(a, c_prev, tc, g_h, gh, gc, gg, ids, gb, gtable):  # type: ignore[no-untyped-def]
    """_grads_rows over the batch on the calling thread, adding into gb[0] and gtable[0]."""
    _grads_rows(a, c_prev, tc, g_h, gh, gc, gg, 0, a.shape[0], ids, gb[0], gtable[0])


@_inline
def _gru_rows(bias, xg, hg, a, hn, h, h_next, b0, b1):  # type: ignore[no-untyped-def]
    """The rows [b0, b1) of one GRU step after its GEMM (hg = h @ W_hh.T, (B, 3H)): r, z
    and n into a (B, 3H), hn = hg_n + b_hn and the new state h_next (B, H)."""
    for b in range(b0, b1):
        gru.activate_units(bias, xg[b], hg[b], a[b], hn[b], h[b], h_next[b], 0,
                           a.shape[1] // 3)


@_inline
def _gru_grads_rows(a, hn, h_prev, g_h, carry, via_w, gx, gg, b0, b1):  # type: ignore[no-untyped-def]
    """The rows [b0, b1) of one step of the GRU's backward after its GEMM (via_w = the
    next step's h-gate gradients @ W_hh, zeros for the last step), as
    numba_threaded_gru's kernels compute them: the x- and h-gates' gradients into gx and
    gg (B, 3H), and carry = dh * z."""
    gru.backward_share(gg[b0:b0], gg[b0:b0], a[b0:b1], hn[b0:b1], h_prev[b0:b1], g_h[b0:b1],
                       carry[b0:b1], via_w[b0:b1], gx[b0:b1], gg[b0:b1], 0, a.shape[1] // 3)


@threaded
def gru_gates_forward(bias, xg, hg, a, hn, h, h_next, parts):  # type: ignore[no-untyped-def]
    """_gru_rows over the batch, in `parts` shares of its rows on numba's threads."""
    B = a.shape[0]
    for p in numba.prange(parts):
        _gru_rows(bias, xg, hg, a, hn, h, h_next, p * B // parts, (p + 1) * B // parts)


@serial
def gru_gates_forward_serial(bias, xg, hg, a, hn, h, h_next):  # type: ignore[no-untyped-def]
    """_gru_rows over the batch on the calling thread."""
    _gru_rows(bias, xg, hg, a, hn, h, h_next, 0, a.shape[0])


@threaded
def gru_gates_backward(a, hn, h_prev, g_h, carry, via_w, gx, gg, parts):  # type: ignore[no-untyped-def]
    """_gru_grads_rows over the batch, in `parts` shares of its rows on numba's threads."""
    B = a.shape[0]
    for p in numba.prange(parts):
        _gru_grads_rows(a, hn, h_prev, g_h, carry, via_w, gx, gg, p * B // parts,
                        (p + 1) * B // parts)


@serial
def gru_gates_backward_serial(a, hn, h_prev, g_h, carry, via_w, gx, gg):  # type: ignore[no-untyped-def]
    """_gru_grads_rows over the batch on the calling thread."""
    _gru_grads_rows(a, hn, h_prev, g_h, carry, via_w, gx, gg, 0, a.shape[0])
