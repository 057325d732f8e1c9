"""ONNX exporters of the activations PyTorch has beyond the basic ones: ReLU6, Hardtanh,
Hardsigmoid, Hardswish, SELU, CELU, Softsign, Mish, LogSigmoid, Tanhshrink, LogSoftmax,
Softmin, GLU, Threshold and PReLU, each as the opset-14 ops that compute it."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.activation_composite import _SELU_ALPHA, _SELU_SCALE
from lamina.io.onnx_export import Context, _w, register_onnx_exporter


def _c(ctx: Context, path: str, name: str, value: Any) -> str:
    return ctx.constant(f"{path}.{name}", np.array(value, np.float32))


def _clip(low: float, high: float) -> Any:
    def export(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
        lo = getattr(layer, "min_val", low)
        hi = getattr(layer, "max_val", high)
        return ctx.node("Clip", [x, _c(ctx, path, "min", lo), _c(ctx, path, "max", hi)], path)
    return export


register_onnx_exporter("ReLU6")(_clip(0.0, 6.0))
register_onnx_exporter("Hardtanh")(_clip(-1.0, 1.0))


@register_onnx_exporter("Hardsigmoid")
def _hardsigmoid(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("HardSigmoid", [x], path, alpha=1 / 6, beta=0.5)


@register_onnx_exporter("Hardswish")
def _hardswish(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("HardSwish", [x], path)


@register_onnx_exporter("SELU")
def _selu(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("Selu", [x], path, alpha=_SELU_ALPHA, gamma=_SELU_SCALE)


@register_onnx_exporter("CELU")
def _celu(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("Celu", [x], path, alpha=float(layer.alpha))


@register_onnx_exporter("Softsign")
def _softsign(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("Softsign", [x], path)


@register_onnx_exporter("Mish")
def _mish(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    (sp,) = ctx.node("Softplus", [x], path)
    (t,) = ctx.node("Tanh", [sp], path)
    return ctx.node("Mul", [x, t], path)


@register_onnx_exporter("LogSigmoid")
def _logsigmoid(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    (neg,) = ctx.node("Neg", [x], path)
    (sp,) = ctx.node("Softplus", [neg], path)
    return ctx.node("Neg", [sp], path)


@register_onnx_exporter("Tanhshrink")
def _tanhshrink(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    (t,) = ctx.node("Tanh", [x], path)
    return ctx.node("Sub", [x, t], path)


def _dim(layer: Any) -> int:
    return int(layer.dim) if layer.dim is not None else -1


@register_onnx_exporter("LogSoftmax")
def _log_softmax(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("LogSoftmax", [x], path, axis=_dim(layer))


@register_onnx_exporter("Softmin")
def _softmin(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    (neg,) = ctx.node("Neg", [x], path)
    return ctx.node("Softmax", [neg], path, axis=_dim(layer))


@register_onnx_exporter("GLU")
def _glu(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    # the halves by Slice (its form is the same in every opset from 10 on)
    big = np.iinfo(np.int64).max

    (shape,) = ctx.node("Shape", [x], path)
    (n,) = ctx.node("Gather", [shape, ctx.constant(f"{path}.axis", np.array(layer.dim,
                                                                             np.int64))], path)
    (mid,) = ctx.node("Div", [n, ctx.constant(f"{path}.two", np.array(2, np.int64))], path)
    (mid1,) = ctx.node("Unsqueeze", [mid, ctx.constant(f"{path}.zero", np.array([0],
                                                                              np.int64))], path)
    zero = ctx.constant(f"{path}.start", np.array([0], np.int64))
    axis = ctx.constant(f"{path}.axes", np.array([layer.dim], np.int64))
    (a,) = ctx.node("Slice", [x, zero, mid1, axis], path)
    (b,) = ctx.node("Slice", [x, mid1, ctx.constant(f"{path}.end", np.array([big], np.int64)),
                              axis], path)
    (s,) = ctx.node("Sigmoid", [b], path)
    return ctx.node("Mul", [a, s], path)


@register_onnx_exporter("Threshold")
def _threshold(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    (above,) = ctx.node("Greater", [x, _c(ctx, path, "threshold", layer.threshold)], path)
    return ctx.node("Where", [above, x, _c(ctx, path, "value", layer.value)], path)


@register_onnx_exporter("PReLU")
def _prelu(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    # ONNX broadcasts the slope from the right: one per channel is a (C, 1, ...) array
    # for the input's rank (recorded by the layer's forward; export runs the model first)
    w = _w(layer, "weight")
    rank = layer.__dict__.get("input_rank", 3)
    slope = w if w.size == 1 else w.reshape(-1, *([1] * max(rank - 2, 0)))
    return ctx.node("PRelu", [x, ctx.constant(f"{path}.weight", slope)], path)
