"""An LSTM layer's recurrence over x-gates looked up by id: the op an execution plan makes
of a lookup read by the recurrence alone (lamina.plan.rewrite.lookup_into_lstm).

A language model's first LSTM layer reads an embedding; once the plan has moved the
input projection onto the embedding's table (linear_of_embedding), the x-gates of every
step are rows of a (V, 4H) table picked by the ids. Looked up as an op of its own, they
are a (T, B, 4H) array written to memory in one pass, which the recurrence then reads
back and writes over with the activated gates. Here the compiled kernels look up each
step's rows as they reach the step, into the array the activated gates go to anyway:
one pass over that memory instead of three. The values are the same bit for bit, and so
are the gradients but the table's: the gate gradients summed by id, which the threaded
backward kernels sum as they make them (in another order than the lookup's backward,
which reads them all again), where the table is small enough to stay in cache.

`input_projection` is the same move in eager mode: a recurrent layer whose input is an
embedding's rows projects the embedding's table, not its rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.array import Transpose
from lamina.functions.connection import Embedding, check_ids, embedding, linear, sum_rows_by_id
from lamina.functions.recurrent import LSTMSequence


class LSTMLookupSequence(LSTMSequence):
    """LSTMSequence whose x-gates are table[ids]: inputs ids (T, B) of integers in
    [0, V), table (V, 4H), h0 and c0 (B, H), W_hh (4H, H) and optionally b_hh (4H,);
    outputs as LSTMSequence's. No gradient flows to the ids."""

    def forward(self, ids: Any, table: Any, h0: Any, c0: Any, W_hh: Any, b_hh: Any = None
                ) -> tuple[Any, Any, Any]:
        if ids.ndim != 2 or table.ndim != 2:
            raise ShapeError(f"lstm_lookup_sequence: expected ids (T, B) and a table "
                             f"(V, 4H); got {ids.shape} and {table.shape}")
        check_ids("lstm_lookup_sequence", ids, table.shape[0])
        self.ids = np.ascontiguousarray(ids, np.intp)  # the kernels' one index type
        table = np.ascontiguousarray(table)
        self.table_meta = (table.shape, table.dtype)
        acts = np.empty((*ids.shape, table.shape[1]), table.dtype)
        hs, cs, tcs = self.recur(acts, h0, c0, W_hh, b_hh, lookup=(self.ids, table))
        self.save_for_backward(acts, hs, cs, tcs, W_hh)
        return hs[1:], hs[-1], cs[-1]

    def gate_needs(self) -> tuple[bool, ...]:
        # the x-gates' gradient is wanted exactly where the table's is
        return self.needs_input_grad[1:]

    def lookup_ids(self) -> tuple[Any, int] | None:
        return (self.ids, self.table_meta[0][0]) if self.needs_input_grad[1] else None

    def gates_grad(self, gg_all: Any, by_id: Any) -> Any:
        if by_id is not None:
            return by_id
        g_table = np.zeros(*self.table_meta)
        sum_rows_by_id(self.ids.ravel(), gg_all.reshape(-1, g_table.shape[1]), g_table)
        return g_table

    def backward(self, g_hs: Any, g_hT: Any, g_cT: Any) -> tuple[Any, ...]:
        return (None, *super().backward(g_hs, g_hT, g_cT))


def input_projection(x: Tensor, W: Tensor, b: Tensor | None = None) -> Tensor:
    """x @ W.T + b: a recurrent layer's input projection of every step, x (T, B, I).

    Where x is an embedding's rows (see `looked_up`), computed as embedding(ids, E @ W.T
    + b): the rows of the projected table are the products of every row the ids can
    pick, so the values are the same to float rounding and, by the chain rule, so are E's
    and W's gradients (the table's gradient is the output's summed by id). A
    character-level language model's 64-row table against its 1600 ids makes the
    projection's three GEMMs, forward and backward, 25 times smaller; an execution plan
    does the same (lamina.plan.rewrite.linear_of_embedding).
    """
    found = looked_up(x)
    if found is None:
        return linear(x, W, b)
    ids, table = found
    return embedding(ids, linear(table, W, b))


def looked_up(x: Tensor) -> tuple[Tensor, Tensor] | None:
    """(ids, table) where x is table[ids] as a plain F.embedding made it (no padding row,
    no scaling by frequency), or that (B, T, F) made time-major by transpose(0, 1) (ids
    then transposed too); and where the projection of the table is the smaller one (more
    ids than rows), neither ids nor table has changed in place since, and nothing waits
    for a gradient of x itself (a hook, retain_grad). Else None."""
    op, turned = _maker(x), False
    if type(op) is Transpose and op.axes == (1, 0, 2):
        op, turned = _maker(op.inputs[0]), True
    if type(op) is not Embedding or op.padding_idx is not None or op.scale_grad_by_freq:
        return None
    ids, table = op.inputs
    if (ids._version, table._version) != op.versions or ids.array.size <= table.shape[0]:
        return None
    return (ids.transpose(0, 1) if turned else ids), table


def _maker(x: Tensor) -> Any:
    """The op that made x, where it may be read again: None for a leaf, an op a backward
    released (its inputs freed), or an x whose own gradient is asked for (retained, or
    hooked: a hook on an op's output is kept by the op)."""
    op = x.creator
    if op is None or op.released or x._extra is not None or "tensor_hooks" in vars(op):
        return None
    return op
