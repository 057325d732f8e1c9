"""Fused LSTM ops: one op per time step instead of a dozen, or one for the whole sequence
(the GRU's are in recurrent_gru.py).

An LSTM step as separate ops records a split, three sigmoids, two tanhs, three products
and a sum; fused, its backward is the closed form below and the step allocates a third as
much. The matrix products stay outside (F.linear), where BLAS does the work.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused, parallel
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions import recurrent_blas
from lamina.functions._util import column_sums
from lamina.functions.activation import sigmoid_array
from lamina.fused.mkl_blas import matmul

# Up to this many rows, a step on one thread runs faster as one compiled kernel (its
# product in register blocks, the gates activated as they come out) than as a BLAS GEMM
# and four passes; from 64 rows on, BLAS's blocking wins (benchmarks/RESULTS.md).
SERIAL_ROWS = 32
# Up to this size of a table (LSTMLookupSequence's), each share of the compiled backward
# sums the gate gradients into its rows as it makes them: the table stays in the core's
# cache beside W_hh, and the sum needs no pass of its own over every step's.
LOOKUP_SUM_BYTES = 1 << 20


def serial_steps(rows: int) -> bool:
    """Whether a recurrence on this many rows runs the serial compiled kernels (forward and
    backward), where no threaded one runs: a batch of up to SERIAL_ROWS on one thread
    (lamina's only thread, or a task of a split step's)."""
    return rows <= SERIAL_ROWS and (parallel.in_task() or parallel.get_num_threads() == 1)


class LSTMCell(Function):
    """gates (B, 4H) in PyTorch's order i, f, g, o and c_prev (B, H) -> h, c."""

    def forward(self, gates: Any, c_prev: Any) -> tuple[Any, Any]:
        hsize = c_prev.shape[-1]
        if gates.shape[-1] != 4 * hsize or gates.shape[:-1] != c_prev.shape[:-1]:
            raise ShapeError(
                f"lstm_cell: expected gates (B, {4 * hsize}) for a cell state {c_prev.shape}, "
                f"got {gates.shape}"
            )
        act = np.empty_like(gates)
        act[:, : 2 * hsize] = sigmoid_array(gates[:, : 2 * hsize])
        act[:, 2 * hsize : 3 * hsize] = np.tanh(gates[:, 2 * hsize : 3 * hsize])
        act[:, 3 * hsize :] = sigmoid_array(gates[:, 3 * hsize :])
        i, f, g, o = np.split(act, 4, axis=1)
        c = f * c_prev + i * g
        tc = np.tanh(c)
        self.save_for_backward(act, c_prev, tc)
        return o * tc, c

    def backward(self, gh: Any, gc: Any) -> tuple[Any, Any]:
        act, c_prev, tc = self.saved_tensors
        i, f, g, o = np.split(act, 4, axis=1)
        gc = gc + gh * o * (1 - tc * tc)
        ggates = np.empty_like(act)
        hsize = c_prev.shape[-1]
        ggates[:, :hsize] = gc * g * i * (1 - i)
        ggates[:, hsize : 2 * hsize] = gc * c_prev * f * (1 - f)
        ggates[:, 2 * hsize : 3 * hsize] = gc * i * (1 - g * g)
        ggates[:, 3 * hsize :] = gh * tc * o * (1 - o)
        return ggates, gc * f


class LSTMSequence(Function):
    """The whole recurrence of one LSTM layer over T steps as one op (time-major).

    Inputs: x-gates (T, B, 4H) = x @ W_ih.T + b_ih for every step (one GEMM, outside),
    h0 and c0 (B, H), W_hh (4H, H) and optionally b_hh (4H,). Outputs: h for every step
    (T, B, H), and the final h and c (B, H).
    Fused because a per-step op would compute and add a (4H, H) weight gradient T times;
    here the gate gradients of all steps are kept and dW_hh is one GEMM over them.

    scratch_gates: the x-gates are this op's to overwrite, as where the LSTM layer makes
    them for it alone; it activates them in place instead of in a copy.
    """

    def __init__(self, scratch_gates: bool = False) -> None:
        self.scratch_gates = scratch_gates

    def forward(self, xg: Any, h0: Any, c0: Any, W_hh: Any, b_hh: Any = None
                ) -> tuple[Any, Any, Any]:
        owned = self.scratch_gates and xg.flags.c_contiguous and xg.flags.writeable
        acts = xg if owned else xg.copy()
        hs, cs, tcs = self.recur(acts, h0, c0, W_hh, b_hh)
        self.save_for_backward(acts, hs, cs, tcs, W_hh)
        return hs[1:], hs[-1], cs[-1]

    def recur(self, acts: Any, h0: Any, c0: Any, W_hh: Any, b_hh: Any,
              lookup: tuple[Any, Any] | None = None) -> tuple[Any, ...]:
        """Run the recurrence, activating the gates in `acts` (the x-gates, written over);
        returns the states before and after every step, hs and cs (T + 1, B, H), and
        tanh(c) of each step (T, B, H). lookup: (ids (T, B), table (V, 4H)), the x-gates
        being table[ids], which acts does not hold yet (the compiled kernels look each
        step's up as they reach it)."""
        T, B, G = acts.shape
        H = G // 4
        if G != 4 * H or h0.shape != (B, H) or W_hh.shape != (G, H):
            raise ShapeError(f"lstm_sequence: expected x-gates (T, B, 4H), states (B, H) and "
                             f"W_hh (4H, H); got {acts.shape}, {h0.shape}, {W_hh.shape}")
        hs = np.empty((T + 1, B, H), acts.dtype)  # hs[t] is the state before step t
        cs = np.empty((T + 1, B, H), acts.dtype)
        tcs = np.empty((T, B, H), acts.dtype)  # tanh(c_t)
        hs[0], cs[0] = h0, c0
        # W_hh @ h.T, read transposed: with a batch of rows far fewer than W_hh's, BLAS
        # runs this orientation faster than h @ W_hh.T (a transposed operand).
        hg = np.empty((G, B), acts.dtype)
        self.has_bias = b_hh is not None
        compiled = fused.compiled()
        if not fused.fits(acts, hs, W_hh):
            compiled = None  # the kernels take float32 C-contiguous arrays
        if compiled is not None:
            bias = (np.zeros(G, acts.dtype) if b_hh is None
                    else np.ascontiguousarray(b_hh, acts.dtype))
            ids, table = (np.empty((T, 0), np.intp), acts[0, :0]) if lookup is None else lookup
            parts = fused.threaded_parts()
            if recurrent_blas.on_blas(B, W_hh):
                recurrent_blas.forward(compiled, acts, hs, cs, tcs, W_hh, bias, parts, ids,
                                       table)
                return hs, cs, tcs
            if parts > 1:  # each thread with its share of the rows, or of the units
                kernel = (compiled.lstm_forward_rows if compiled.share_rows(B, W_hh, parts)
                          else compiled.lstm_forward_threaded)
                kernel(W_hh, bias, hs, acts, cs, tcs, parts, ids, table)
                return hs, cs, tcs
            if serial_steps(B):
                compiled.lstm_forward_serial(W_hh, bias, hs, acts, cs, tcs, ids, table)
                return hs, cs, tcs
        if lookup is not None:
            np.take(lookup[1], lookup[0], axis=0, out=acts)
        if compiled is not None:
            for t in range(T):  # the same steps in four calls, not fifteen
                np.matmul(W_hh, hs[t].T, out=hg)
                compiled.lstm_preactivate(acts[t], hg, bias)
                np.tanh(acts[t], out=acts[t])
                compiled.lstm_cell_state(acts[t], cs[t], cs[t + 1])
                np.tanh(cs[t + 1], out=tcs[t])
                np.multiply(acts[t, :, 3 * H:], tcs[t], out=hs[t + 1])
            return hs, cs, tcs
        if b_hh is not None:
            acts += b_hh
        for t in range(T):
            a = acts[t]
            a += np.matmul(W_hh, hs[t].T, out=hg).T
            sigmoid_array(a[:, : 2 * H], out=a[:, : 2 * H])  # i, f
            np.tanh(a[:, 2 * H : 3 * H], out=a[:, 2 * H : 3 * H])  # g
            sigmoid_array(a[:, 3 * H :], out=a[:, 3 * H :])  # o
            np.multiply(a[:, H : 2 * H], cs[t], out=cs[t + 1])
            cs[t + 1] += a[:, :H] * a[:, 2 * H : 3 * H]
            np.tanh(cs[t + 1], out=tcs[t])
            np.multiply(a[:, 3 * H :], tcs[t], out=hs[t + 1])
        return hs, cs, tcs

    def backward(self, g_hs: Any, g_hT: Any, g_cT: Any) -> tuple[Any, ...]:
        acts, hs, cs, tcs, W_hh = self.saved_tensors
        T, B, G = acts.shape
        H = G // 4
        compiled = fused.compiled()
        if compiled is not None and fused.fits(acts, hs, cs, tcs, W_hh):
            return self._weight_grads(*self._compiled_steps(compiled, g_hs, g_hT, g_cT))
        i, f, g, o = (acts[..., k * H : (k + 1) * H] for k in range(4))
        # Every factor that does not depend on the incoming gradient, for all steps at once:
        # d tanh(c) / dc * o, and each gate's pre-activation derivative times its partner.
        dc_from_h = o * (1 - tcs * tcs)
        factors = np.empty_like(acts)
        np.multiply(g * i, 1 - i, out=factors[..., :H])
        np.multiply(cs[:T] * f, 1 - f, out=factors[..., H : 2 * H])
        np.multiply(i, 1 - g * g, out=factors[..., 2 * H : 3 * H])
        np.multiply(tcs * o, 1 - o, out=factors[..., 3 * H :])
        gg_all = np.empty_like(acts)
        gh, gc = g_hT.copy(), g_cT.copy()
        for t in range(T - 1, -1, -1):
            gh += g_hs[t]
            gc += gh * dc_from_h[t]
            gg, fa = gg_all[t], factors[t]
            np.multiply(fa[:, : 3 * H], np.tile(gc, 3), out=gg[:, : 3 * H])
            np.multiply(fa[:, 3 * H :], gh, out=gg[:, 3 * H :])
            gc *= f[t]
            gh = gg @ W_hh
        return self._weight_grads(gg_all, gh, gc)

    def gate_needs(self) -> tuple[bool, ...]:
        """needs_input_grad of the x-gates, h0, c0, W_hh and b_hh, in that order."""
        return self.needs_input_grad

    def lookup_ids(self) -> tuple[Any, int] | None:
        """None, or the ids (T, B) by which the compiled kernels should sum the gate
        gradients into the rows of a table (LSTMLookupSequence's), and its row count."""
        return None

    def gates_grad(self, gg_all: Any, by_id: Any) -> Any:
        """The first input's gradient from every step's gate gradients: the x-gates' own
        (LSTMLookupSequence's is its table's; by_id: that, where the kernels summed it)."""
        return gg_all

    def _compiled_steps(self, kernels: Any, g_hs: Any, g_hT: Any, g_cT: Any
                        ) -> tuple[Any, ...]:
        """The backward recurrence with one compiled kernel a step (lamina.fused) beside
        its GEMM: the gate gradients (T, B, 4H), gh and gc for the initial states, and
        the sums the threaded and serial kernels make as they go (see _summed)."""
        acts, hs, cs, tcs, W_hh = self.saved_tensors
        T, B, G = acts.shape
        gg_all = np.empty_like(acts)
        gh, gc = np.array(g_hT, acts.dtype), np.array(g_cT, acts.dtype)
        g_hs = np.ascontiguousarray(g_hs, acts.dtype)
        parts = fused.threaded_parts()
        if recurrent_blas.on_blas(B, W_hh):
            ids, gb, gtable = self._summed(parts, acts)
            recurrent_blas.backward(kernels, acts, cs, tcs, g_hs, gh, gc, gg_all, W_hh, parts,
                                    ids, gb, gtable)
        elif parts > 1:  # each thread with its share of the rows, or of the units
            rows = kernels.share_rows(B, W_hh, parts)
            kernel = kernels.lstm_backward_rows if rows else kernels.lstm_backward_threaded
            ids, gb, gtable = self._summed(parts if rows else 1, acts)
            kernel(kernels.transposed(W_hh, parts), acts, cs, tcs, g_hs, gh, gc, gg_all, parts,
                   ids, gb, gtable)
        elif serial_steps(B):  # one kernel on this thread, as in the forward
            ids, gb, gtable = self._summed(1, acts)
            kernels.lstm_backward_serial(kernels.transposed_serial(W_hh), acts, cs, tcs, g_hs,
                                         gh, gc, gg_all, ids, gb, gtable)
        else:
            for t in range(T - 1, -1, -1):
                kernels.lstm_backward_step(acts[t], cs[t], tcs[t], g_hs[t], gh, gc, gg_all[t])
                matmul(gg_all[t], W_hh, out=gh)
            return gg_all, gh, gc
        return (gg_all, matmul(gg_all[0], W_hh), gc, gb.sum(0),
                gtable.sum(0) if gtable.shape[1] else None)

    def _summed(self, shares: int, acts: Any) -> tuple[Any, Any, Any]:
        """What the compiled backward kernels add the gate gradients into, one of each per
        share: the bias's gradient (shares, 4H), and by id, where lookup_ids gives ids
        and the table is small enough to stay in a core's cache, a table's (shares, V,
        4H); else the ids (T, 0) and a table of no rows."""
        T, B, G = acts.shape
        ids, rows = self.lookup_ids() or (None, 0)
        if rows * G * acts.itemsize > LOOKUP_SUM_BYTES:
            ids, rows = None, 0
        return (np.empty((T, 0), np.intp) if ids is None else ids,
                np.zeros((shares, G), acts.dtype), np.zeros((shares, rows, G), acts.dtype))

    def _weight_grads(self, gg_all: Any, gh: Any, gc: Any, gb: Any = None, by_id: Any = None
                      ) -> tuple[Any, ...]:
        """The op's gradients from the gate gradients of every step and those of the
        initial states: dW_hh and db_hh are one GEMM and one sum over all steps (gb where
        the kernels summed it)."""
        acts, hs = self.saved_tensors[:2]
        T, B, G = acts.shape
        H = G // 4
        need = self.gate_needs()
        flat = gg_all.reshape(T * B, G)
        gW = matmul(flat.T, hs[:T].reshape(T * B, H)) if need[3] else None
        grads = [self.gates_grad(gg_all, by_id) if need[0] else None,
                 gh if need[1] else None, gc if need[2] else None, gW]
        if self.has_bias:
            grads.append(None if not need[4] else column_sums(flat) if gb is None else gb)
        return tuple(grads)


def lstm_cell(gates: Tensor, c_prev: Tensor) -> tuple[Tensor, Tensor]:
    """One LSTM step from pre-activation gates.

    Args:
        gates: x @ W_ih.T + b_ih + h @ W_hh.T + b_hh, shape (B, 4H), gates i, f, g, o.
        c_prev: the previous cell state, shape (B, H).

    Returns:
        (h, c), each (B, H): c = f * c_prev + i * g, h = o * tanh(c).
    """
    return LSTMCell().apply(gates, c_prev)


def lstm_sequence(x_gates: Tensor, h0: Tensor, c0: Tensor, W_hh: Tensor,
                  b_hh: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """A whole LSTM layer's recurrence in one op, time-major.

    Args:
        x_gates: x @ W_ih.T + b_ih for all steps, (T, B, 4H), gates i, f, g, o.
        h0, c0: initial states (B, H).
        W_hh: recurrent weight (4H, H); b_hh: optional bias (4H,).

    Returns:
        (h for every step (T, B, H), final h (B, H), final c (B, H)).
    """
    args = (x_gates, h0, c0, W_hh) if b_hh is None else (x_gates, h0, c0, W_hh, b_hh)
    return LSTMSequence().apply(*args)
