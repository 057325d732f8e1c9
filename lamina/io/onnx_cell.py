"""ONNX exporters of the recurrent cells (RNNCell, LSTMCell, GRUCell): one step from zero
state, as ONNX's RNN, LSTM and GRU ops over a sequence of length 1."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.io.onnx_export import Context, Exporter, recurrent_op, register_onnx_exporter


def _cell(op: str) -> Exporter:
    def export(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
        (seq,) = ctx.node("Unsqueeze", [x, ctx.constant(f"{path}.ax0", np.array([0]))], path)
        outs = recurrent_op(ctx, layer, op, seq, path, [""])
        first = ctx.constant(f"{path}.ax_first", np.array([0]))
        states = [ctx.node("Squeeze", [s, first], path)[0] for s in outs[1:]]
        return states if op == "LSTM" else states[:1]

    return export


for _op, _name in (("RNN", "RNNCell"), ("LSTM", "LSTMCell"), ("GRU", "GRUCell")):
    register_onnx_exporter(_name)(_cell(_op))
