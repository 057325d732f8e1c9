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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.errors import ShapeError
from lamina.functions.connection import check_ids, sum_rows_by_id
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
