"""ONNX exporters of the attention family: self-attention, TransformerEncoderLayer and its
stack, and PositionalEncoding, spelled out in opset-14 ops (MatMul, Softmax, Trilu for the causal
mask), their sequence lengths read from the input at run time."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.io.onnx_export import (
    Context,
    _dims,
    _gelu,
    _ints,
    _linear,
    _w,
    export_layer,
    register_onnx_exporter,
)
from lamina.nn.activation import GELU


@register_onnx_exporter("SelfAttention")
@register_onnx_exporter("MultiheadAttention")  # as a TransformerEncoderLayer uses it
def _attention(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    e, heads = layer.embed_dim, layer.num_heads
    if not layer.batch_first:
        (x,) = ctx.node("Transpose", [x], path, perm=[1, 0, 2])
    split = ctx.constant(f"{path}.heads", np.array([0, 0, heads, e // heads], np.int64))
    q, kt, v = (ctx.node("Transpose", [ctx.node("Reshape", [y, split], path)[0]], path,
                         perm=[0, 2, 3, 1] if i == 1 else [0, 2, 1, 3])[0]
                for i, y in enumerate(_in_projections(ctx, layer, path, x)))
    (scores,) = ctx.node("MatMul", [q, kt], path)
    scale = ctx.constant(f"{path}.scale", np.array(1 / np.sqrt(e // heads), np.float32))
    (scores,) = ctx.node("Mul", [scores, scale], path)
    if layer.causal:  # -inf above the diagonal, built for whatever length arrives
        (shape,) = _dims(ctx, scores, path, 2, 4)
        (mask,) = ctx.node("ConstantOfShape", [shape], path, value=ctx.numpy_helper.from_array(
            np.array([-np.inf], np.float32)))
        (mask,) = ctx.node("Trilu", [mask, ctx.constant(f"{path}.one", np.array(1, np.int64))],
                           path, upper=1)
        (scores,) = ctx.node("Add", [scores, mask], path)
    (p,) = ctx.node("Softmax", [scores], path, axis=-1)
    (y,) = ctx.node("MatMul", [p, v], path)
    (y,) = ctx.node("Transpose", [y], path, perm=[0, 2, 1, 3])
    (y,) = ctx.node("Reshape", [y, ctx.constant(f"{path}.merge", np.array([0, 0, e], np.int64))],
                    path)
    (y,) = _linear(ctx, layer.out_proj, f"{path}.out_proj", y)
    return ctx.node("Transpose", [y], path, perm=[1, 0, 2]) if not layer.batch_first else [y]


@register_onnx_exporter("TransformerEncoderLayer")
def _encoder_layer(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    def sub(name: str, y: str) -> str:  # one child, exported at its own path
        return export_layer(ctx, getattr(layer, name), f"{path}.{name}", y)[0]

    def feed_forward(y: str) -> str:
        h = sub("linear1", y)
        if layer.activation == "relu":
            (h,) = ctx.node("Relu", [h], path)
        else:  # PyTorch's "gelu" is the exact one
            (h,) = _gelu(ctx, GELU(), f"{path}.gelu", h)
        return sub("linear2", h)

    def add(a: str, b: str) -> str:
        return ctx.node("Add", [a, b], path)[0]

    if layer.norm_first:
        x = add(x, sub("self_attn", sub("norm1", x)))
        return [add(x, feed_forward(sub("norm2", x)))]
    x = sub("norm1", add(x, sub("self_attn", x)))
    return [sub("norm2", add(x, feed_forward(x)))]


@register_onnx_exporter("TransformerEncoder")
def _encoder(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    for i, block in enumerate(layer.layers):
        (x,) = export_layer(ctx, block, f"{path}.layers.{i}", x)
    return [x] if layer.norm is None else export_layer(ctx, layer.norm, f"{path}.norm", x)


@register_onnx_exporter("PositionalEncoding")
def _positions(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    table = ctx.constant(f"{path}.table", _w(layer, "weight") if layer.learned else layer.table)
    (length,) = _dims(ctx, x, path, 1 if layer.batch_first else 0)
    (rows,) = ctx.node("Slice", [table, _ints(ctx, path, 0), length, _ints(ctx, path, 0)], path)
    if not layer.batch_first:
        (rows,) = ctx.node("Unsqueeze", [rows, _ints(ctx, path, 1)], path)
    return ctx.node("Add", [x, rows], path)


def _in_projections(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    e, w = layer.embed_dim, _w(layer, "in_proj_weight")
    out = []
    for i, name in enumerate("qkv"):
        rows = slice(i * e, (i + 1) * e)
        (y,) = ctx.node("MatMul", [x, ctx.constant(f"{path}.{name}_weight_t", w[rows].T.copy())],
                        path)
        if layer.in_proj_bias is not None:
            bias = ctx.constant(f"{path}.{name}_bias", _w(layer, "in_proj_bias")[rows])
            (y,) = ctx.node("Add", [y, bias], path)
        out.append(y)
    return out
