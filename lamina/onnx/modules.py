"""Layer exporters: the recurrent layers, whose loop over time ONNX's RNN, LSTM and GRU ops
hold (no lamina op maps to them: the input projection is one GEMM outside the loop).

PyTorch's gate blocks are reordered to ONNX's. A stateful layer exports as one call from
zero state: the graph is stateless, each run independent.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.onnx.graph import Context, ExportError
from lamina.onnx.registry import Exporter, register_onnx_exporter


def _w(layer: Any, name: str) -> np.ndarray:
    return getattr(layer, name).array


# PyTorch stacks gates as LSTM i,f,g,o and GRU r,z,n; ONNX wants LSTM i,o,f,c and GRU z,r,h.
_GATE_ORDER = {"RNN": [0], "LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2]}


def recurrent_op(ctx: Context, layer: Any, op: str, seq: str, path: str,
                 suffixes: list[str]) -> list[str]:
    """ONNX's RNN, LSTM or GRU op over `seq` (T, B, I) with a layer's weights named
    weight_ih{suffix}, ..., one suffix per direction (two: ONNX's bidirectional), their
    gate blocks in ONNX's order; returns the op's outputs."""
    order, h = _GATE_ORDER[op], layer.hidden_size

    def blocks(a: np.ndarray) -> np.ndarray:
        return np.concatenate([a[g * h:(g + 1) * h] for g in order])

    def stacked(name: str) -> np.ndarray:
        return np.stack([blocks(_w(layer, f"{name}{s}")) for s in suffixes])

    W, R = stacked("weight_ih"), stacked("weight_hh")
    if layer.bias:
        B = np.concatenate([stacked("bias_ih"), stacked("bias_hh")], axis=1)
    else:
        B = np.zeros((len(suffixes), 2 * len(order) * h), W.dtype)
    tag = suffixes[0]
    inputs = [seq, ctx.constant(f"{path}.W{tag}", W), ctx.constant(f"{path}.R{tag}", R),
              ctx.constant(f"{path}.B{tag}", B)]
    attrs: dict[str, Any] = {"hidden_size": h}
    if len(suffixes) == 2:
        attrs["direction"] = "bidirectional"
    if op == "RNN":
        attrs["activations"] = ["Tanh" if layer.nonlinearity == "tanh" else "Relu"
                                ] * len(suffixes)
    if op == "GRU":
        attrs["linear_before_reset"] = 1  # r * (W_hn h + b_hn), as PyTorch computes
    return ctx.node(op, inputs, f"{path}{tag}", n_outputs=3 if op == "LSTM" else 2, **attrs)


def _recurrent(op: str) -> Exporter:
    def export(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
        if getattr(layer, "proj_size", 0):
            raise ExportError(f"{path or 'the model'} (LSTM): ONNX's LSTM has no projection; "
                              "export a model with proj_size=0")
        seq = x
        if layer.batch_first:  # ONNX runtimes implement the time-major layout (layout=0)
            (seq,) = ctx.node("Transpose", [seq], path, perm=[1, 0, 2])
        finals: list[list[str]] = []
        merge = ctx.constant(f"{path}.merge", np.array([0, 0, -1], np.int64))
        for k in range(layer.num_layers):
            outs = recurrent_op(ctx, layer, op, seq, path, layer._suffixes(k))
            # Y is (T, directions, B, H): the directions side by side, as PyTorch's output.
            (seq,) = ctx.node("Transpose", [outs[0]], path, perm=[0, 2, 1, 3])
            (seq,) = ctx.node("Reshape", [seq, merge], path)
            finals.append(outs[1:])  # each (directions, B, H)
        if layer.output == "last":
            idx = ctx.constant(f"{path}.last", np.array(-1, np.int64))
            return ctx.node("Gather", [seq, idx], path, axis=0)
        out = seq
        if layer.batch_first:
            (out,) = ctx.node("Transpose", [seq], path, perm=[1, 0, 2])
        if layer.output == "sequence":
            return [out]
        # "tuple": also the final states, stacked over layers as (num_layers * D, B, H)
        states = [ctx.node("Concat", [f[i] for f in finals], path, axis=0)[0]
                  for i in range(len(finals[0]))]
        return [out, *states]

    return export


for _op in ("RNN", "LSTM", "GRU"):
    register_onnx_exporter(_op)(_recurrent(_op))
