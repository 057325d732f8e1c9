"""ONNX exporters of the recurrent cells (RNNCell, LSTMCell, GRUCell): one step from zero
state, as ONNX's RNN, LSTM and GRU ops over a sequence of length 1."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.io.onnx_export import _GATE_ORDER, Context, Exporter, _w, register_onnx_exporter


def _cell(op: str) -> Exporter:
    def export(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
        order, h = _GATE_ORDER[op], layer.hidden_size

        def blocks(a: np.ndarray) -> np.ndarray:
            return np.concatenate([a[g * h:(g + 1) * h] for g in order])

        W = blocks(_w(layer, "weight_ih"))[None]
        zeros = np.zeros(len(order) * h, W.dtype)
        b_ih = blocks(_w(layer, "bias_ih")) if layer.bias else zeros
        b_hh = blocks(_w(layer, "bias_hh")) if layer.bias else zeros
        (seq,) = ctx.node("Unsqueeze", [x, ctx.constant(f"{path}.ax0", np.array([0]))], path)
        inputs = [seq, ctx.constant(f"{path}.W", W),
                  ctx.constant(f"{path}.R", blocks(_w(layer, "weight_hh"))[None]),
                  ctx.constant(f"{path}.B", np.concatenate([b_ih, b_hh])[None])]
        attrs: dict[str, Any] = {"hidden_size": h}
        if op == "RNN":
            attrs["activations"] = ["Tanh" if layer.nonlinearity == "tanh" else "Relu"]
        if op == "GRU":
            attrs["linear_before_reset"] = 1  # r * (W_hn h + b_hn), as PyTorch computes
        outs = ctx.node(op, inputs, path, n_outputs=3 if op == "LSTM" else 2, **attrs)
        first = ctx.constant(f"{path}.ax_first", np.array([0]))
        states = [ctx.node("Squeeze", [s, first], path)[0] for s in outs[1:]]
        return states if op == "LSTM" else states[:1]

    return export


for _op, _name in (("RNN", "RNNCell"), ("LSTM", "LSTMCell"), ("GRU", "GRUCell")):
    register_onnx_exporter(_name)(_cell(_op))
