"""The LSTM's recurrence on several threads, each with its share of the hidden units: at
every step, its rows of the recurrent GEMM, then the gates, cell and state of those
units. One call runs a layer's whole sequence in one parallel region, the threads
meeting at a barrier after each step (the next step needs all of h: numba_barrier). Or,
where W_hh fits one core's cache (share_rows), each thread with its share of the batch's
rows, which it runs through every step with no wait for the others: one parallel region
a layer. Re-exported by numba_kernels.

A step of F.lstm_sequence on one thread calls BLAS's GEMM (itself threaded) and then
four passes over the step's gates. Here each thread keeps its rows of W_hh (a quarter of
each gate's rows for four threads) in its own cache from step to step, and activates the
gates it has just computed while they are still in that cache. It is what oneDNN's fused
RNN does.

`parts` is the number of shares (lamina's thread count). numba runs them on its own pool
(`parallel=True`); with fewer threads there, one thread runs all the shares (the *_rows
kernels: one after another; the units' kernels: each step's in turn, as
numba_barrier.join decides), which is slower but the same arithmetic. Each share's
arithmetic is fixed by `parts`, not by the threads that run it: the results do not
depend on numba's thread count. A GEMM on BLAS's threads just before costs the first
steps more (its idle threads spin for a while on the cores this pool needs:
lamina.thread_pools' timeout bounds that)."""

from __future__ import annotations

import numba
import numpy as np

from lamina.fused.numba_barrier import shares, wait
from lamina.fused.numba_cache import jit
from lamina.fused.numba_math import FASTMATH, sigmoid32, tanh32
from lamina.fused.numba_recurrent import lstm_unit_grads
from lamina.fused.numba_rows import rows_times, set_rows_times

# Up to this size of W_hh, the threaded kernels share the batch's rows between threads
# rather than the hidden units (share_rows).
ROWS_MAX_WEIGHT_BYTES = 3 << 20

threaded = jit(nogil=True, fastmath=FASTMATH, error_model="numpy",
                      parallel=True)
serial = jit(nogil=True, fastmath=FASTMATH, error_model="numpy")
_inline = jit(nogil=True, fastmath=FASTMATH, error_model="numpy",
                     inline="always")


def share_rows(rows: int, W_hh: np.ndarray, parts: int) -> bool:
    """Whether a recurrence shares the batch's rows between threads (the *_rows kernels)
    rather than the hidden units (*_threaded): a row or more for every thread, and a W_hh
    that one core's cache keeps. A thread that owns rows runs them through every step on
    its own, no step waiting for the other threads' h, but reads all of W_hh at each
    step: LSTMs of H = 256 to 384 in float32 ran 10-25% faster so, H = 448 and 512 no
    faster or slower (benchmarks/RESULTS.md, session 51)."""
    return rows >= parts and W_hh.nbytes <= ROWS_MAX_WEIGHT_BYTES


@_inline
def three_gates(row, H, u0, u1):  # type: ignore[no-untyped-def]
    """The units [u0, u1) of each of the first three gates of a row laid out gate after
    gate, H wide: slices, which a loop reads as vectors (row[H + u] in the loop is not)."""
    return row[u0:u1], row[H + u0:H + u1], row[2 * H + u0:2 * H + u1]


@_inline
def four_gates(row, H, u0, u1):  # type: ignore[no-untyped-def]
    """As three_gates, for the four of an LSTM's row."""
    first, second, third = three_gates(row, H, u0, u1)
    return first, second, third, row[3 * H + u0:3 * H + u1]


@_inline
def _transpose_columns(W, out, c0, c1):  # type: ignore[no-untyped-def]
    """out[c] = W[:, c] for the columns [c0, c1) of W: sixteen of W's rows at a time, so
    the reads of a column stay within sixteen cache lines and each write is a run of
    sixteen."""
    R = W.shape[0]
    for r0 in range(0, R, 16):
        r1 = min(r0 + 16, R)
        for c in range(c0, c1):
            for r in range(r0, r1):
                out[c, r] = W[r, c]


@threaded
def transposed(W, parts):  # type: ignore[no-untyped-def]
    """W.T (C, R) of W (R, C), copied in `parts` shares of W's columns (out's rows) on
    numba's threads: the backward kernels read W_hh.T's rows."""
    R, C = W.shape
    out = np.empty((C, R), W.dtype)
    for p in numba.prange(parts):
        _transpose_columns(W, out, p * C // parts, (p + 1) * C // parts)
    return out


@serial
def transposed_serial(W):  # type: ignore[no-untyped-def]
    """transposed(W, 1) on the calling thread, outside numba's pool (see
    lstm_forward_serial)."""
    out = np.empty((W.shape[1], W.shape[0]), W.dtype)
    _transpose_columns(W, out, 0, W.shape[1])
    return out


@_inline
def _looked_up(table, ids, a, u0, u1):  # type: ignore[no-untyped-def]
    """Each row b of a (B, 4H) gets, for the units [u0, u1) of its four gates, the x-gates
    of table's row ids[b]: the lookup that would otherwise be a pass of its own over all
    steps, here while the step's rows are in this thread's cache."""
    B, G = a.shape
    H = G // 4
    for b in range(B):
        src, row = table[ids[b]], a[b]
        for q in range(4):
            row[q * H + u0:q * H + u1] = src[q * H + u0:q * H + u1]


@_inline
def _step_share(W_hh, bias, h, a, c_prev, c, tc, h_next, u0, u1, ids, table):  # type: ignore[no-untyped-def]
    """One LSTM step for the hidden units [u0, u1): their rows of h @ W_hh.T added to the
    x-gates in a (B, 4H), then activated there with the bias, and their c, tanh(c) and h.
    Where ids (B,) is not empty, the x-gates are first looked up in table (V, 4H)."""
    B, G = a.shape
    H = G // 4
    if ids.shape[0] > 0:
        _looked_up(table, ids, a, u0, u1)
    for q in range(4):
        rows_times(W_hh, q * H + u0, u1 - u0, h, a, q * H + u0)
    for b in range(B):
        activate_units(a[b], bias, c_prev[b], c[b], tc[b], h_next[b], u0, u1)


@_inline
def activate_units(a, bias, c_prev, c, tc, h_next, u0, u1):  # type: ignore[no-untyped-def]
    """The units [u0, u1) of one row's step: its gates a (4H,) plus bias activated in place,
    then c = f * c_prev + i * g, tc = tanh(c) and h_next = o * tc (each (H,)). Written out,
    not through a function that returns the six values: LLVM leaves such a loop scalar."""
    H = a.shape[0] // 4
    ai, af, ag, ao = four_gates(a, H, u0, u1)
    bi, bf, bg, bo = four_gates(bias, H, u0, u1)
    cp, cr, tr, hr = c_prev[u0:u1], c[u0:u1], tc[u0:u1], h_next[u0:u1]
    for j in range(u1 - u0):
        i = sigmoid32(ai[j] + bi[j])
        f = sigmoid32(af[j] + bf[j])
        g = tanh32(ag[j] + bg[j])
        o = sigmoid32(ao[j] + bo[j])
        ai[j] = i
        af[j] = f
        ag[j] = g
        ao[j] = o
        cn = f * cp[j] + i * g
        t = tanh32(cn)
        cr[j] = cn
        tr[j] = t
        hr[j] = o * t


@threaded
def lstm_forward_threaded(W_hh, bias, hs, acts, cs, tcs, parts, ids, table):  # type: ignore[no-untyped-def]
    """An LSTM layer's recurrence, each step in `parts` shares of the hidden units. W_hh
    (4H, H), bias (4H,); acts (T, B, 4H): the x-gates in, the activated gates i, f, g, o
    out (as F.lstm_sequence keeps them for the backward); hs and cs (T + 1, B, H) hold
    h0 and c0 in [0] and get each step's state after it; tcs (T, B, H) gets tanh(c).
    ids (T, B) and table (V, 4H): the x-gates are table[ids], written into acts here;
    ids of shape (T, 0): they are in acts already."""
    T, B, G = acts.shape
    H = G // 4
    sync = np.zeros(4, np.int64)
    for p in numba.prange(parts):  # one region; the shares meet after each step
        q0, q1, together = shares(sync, p, parts)
        generation = 0
        for t in range(T):
            for q in range(q0, q1):
                _step_share(W_hh, bias, hs[t], acts[t], cs[t], cs[t + 1], tcs[t], hs[t + 1],
                            q * H // parts, (q + 1) * H // parts, ids[t], table)
            if together and t + 1 < T:  # the next step needs all of h
                generation = wait(sync, parts, generation)


@threaded
def lstm_forward_rows(W_hh, bias, hs, acts, cs, tcs, parts, ids, table):  # type: ignore[no-untyped-def]
    """lstm_forward_threaded with the batch's rows shared instead of the units: each
    thread runs its rows through every step, all units, with no step waiting for another
    thread's h. Each thread reads all of W_hh at every step, so this wins where W_hh stays
    in one core's cache (see F.lstm_sequence's choice)."""
    T, B, G = acts.shape
    H = G // 4
    for p in numba.prange(parts):
        b0, b1 = p * B // parts, (p + 1) * B // parts
        for t in range(T):
            _step_share(W_hh, bias, hs[t, b0:b1], acts[t, b0:b1], cs[t, b0:b1],
                        cs[t + 1, b0:b1], tcs[t, b0:b1], hs[t + 1, b0:b1], 0, H,
                        ids[t, b0:b1], table)


@serial
def lstm_forward_serial(W_hh, bias, hs, acts, cs, tcs, ids, table):  # type: ignore[no-untyped-def]
    """lstm_forward_threaded in one share on the calling thread, outside numba's pool (a
    thread of lamina's split step, or lamina on one thread). For a small batch it beats
    a BLAS GEMM and four passes a step; for a large one BLAS's blocking wins."""
    for t in range(acts.shape[0]):
        _step_share(W_hh, bias, hs[t], acts[t], cs[t], cs[t + 1], tcs[t], hs[t + 1], 0,
                    hs.shape[2], ids[t], table)


@_inline
def backward_share(W_t, gg_next, a, c_prev, tc, g_h, gh, gc, gg, u0, u1, ids, gb, gtable):  # type: ignore[no-untyped-def]
    """One step of the LSTM's backward for the hidden units [u0, u1): gh's columns for them
    become gg_next @ W_hh's (W_t = W_hh.T; none where gg_next is empty, the last step's),
    then each unit through numba_recurrent.lstm_unit_grads with dh = gh + g_h: the gate
    gradients into gg (B, 4H), and gc becomes c_prev's. The gate gradients are added into
    gb (4H,), the bias's gradient, and where ids (B,) is not empty into gtable's rows at
    ids (the x-gates' table's gradient): while they are in this thread's cache, instead
    of passes of their own over every step's."""
    B, G = a.shape
    H = G // 4
    if gg_next.shape[0] > 0:
        set_rows_times(W_t, u0, u1 - u0, gg_next, gh, u0)
    bi, bf, bg, bo = four_gates(gb, H, u0, u1)
    for b in range(B):
        ai, af, ag, ao = four_gates(a[b], H, u0, u1)
        gi, gf, gG, go = four_gates(gg[b], H, u0, u1)
        cp, tr, outr = c_prev[b, u0:u1], tc[b, u0:u1], g_h[b, u0:u1]
        ghr, gcr = gh[b, u0:u1], gc[b, u0:u1]
        for j in range(u1 - u0):
            di, df, dg, do, gcr[j] = lstm_unit_grads(
                ai[j], af[j], ag[j], ao[j], tr[j], cp[j], ghr[j] + outr[j], gcr[j])
            gi[j], gf[j], gG[j], go[j] = di, df, dg, do
            bi[j] += di
            bf[j] += df
            bg[j] += dg
            bo[j] += do
        if ids.shape[0] > 0:
            ti, tf, tg, to = four_gates(gtable[ids[b]], H, u0, u1)
            for j in range(u1 - u0):
                ti[j] += gi[j]
                tf[j] += gf[j]
                tg[j] += gG[j]
                to[j] += go[j]


@threaded
def lstm_backward_threaded(W_t, acts, cs, tcs, g_hs, gh, gc, gg_all, parts, ids, gb, gtable):  # type: ignore[no-untyped-def]
    """The LSTM's backward recurrence, each step in `parts` shares of the hidden units,
    from the forward's activated gates acts (T, B, 4H), cs (T + 1, B, H) and tcs; W_t is
    W_hh.T (H, 4H). gh and gc (B, H) come in as the gradients of the last h and c; gc
    leaves as c0's, gh as scratch (h0's gradient is gg_all[0] @ W_hh, a GEMM outside).
    g_hs (T, B, H): each step's output gradient; the gate gradients of every step go into
    gg_all (T, B, 4H). Their sums are added into gb[0] (4H,) and, by ids (T, B) unless
    ids is (T, 0), into the rows of gtable[0] (V, 4H): each share its own columns."""
    T, B, G = acts.shape
    H = G // 4
    sync = np.zeros(4, np.int64)
    for p in numba.prange(parts):  # one region, as in lstm_forward_threaded
        q0, q1, together = shares(sync, p, parts)
        generation = 0
        for t in range(T - 1, -1, -1):
            after = gg_all[t + 1] if t + 1 < T else gg_all[t, :0]
            for q in range(q0, q1):
                backward_share(W_t, after, acts[t], cs[t], tcs[t], g_hs[t], gh, gc,
                               gg_all[t], q * H // parts, (q + 1) * H // parts, ids[t],
                               gb[0], gtable[0])
            if together and t > 0:  # the step before reads all of gg_all[t]
                generation = wait(sync, parts, generation)


@threaded
def lstm_backward_rows(W_t, acts, cs, tcs, g_hs, gh, gc, gg_all, parts, ids, gb, gtable):  # type: ignore[no-untyped-def]
    """lstm_backward_threaded with the batch's rows shared instead of the units (see
    lstm_forward_rows): the same arguments and results, but each share p adds its sums
    into gb[p] and gtable[p] (their sums over p are the gradients)."""
    T, B, G = acts.shape
    H = G // 4
    for p in numba.prange(parts):
        b0, b1 = p * B // parts, (p + 1) * B // parts
        for t in range(T - 1, -1, -1):
            after = gg_all[t + 1, b0:b1] if t + 1 < T else gg_all[t, b0:b0]
            backward_share(W_t, after, acts[t, b0:b1], cs[t, b0:b1], tcs[t, b0:b1],
                           g_hs[t, b0:b1], gh[b0:b1], gc[b0:b1], gg_all[t, b0:b1], 0, H,
                           ids[t, b0:b1], gb[p], gtable[p])


@serial
def lstm_backward_serial(W_t, acts, cs, tcs, g_hs, gh, gc, gg_all, ids, gb, gtable):  # type: ignore[no-untyped-def]
    """lstm_backward_rows in one share on the calling thread (see lstm_forward_serial): its
    arguments less `parts`, the sums added into gb[0] and gtable[0]. A step's product here
    beats BLAS's on a small batch, as the forward's does, and a step is one call, not
    two."""
    T, B, G = acts.shape
    for t in range(T - 1, -1, -1):
        after = gg_all[t + 1] if t + 1 < T else gg_all[t, :0]
        backward_share(W_t, after, acts[t], cs[t], tcs[t], g_hs[t], gh, gc, gg_all[t], 0,
                       G // 4, ids[t], gb[0], gtable[0])
