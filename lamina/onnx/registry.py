"""The two kinds of ONNX exporter: per op (most of them) and per layer type.

An op exporter writes one traced op: `fn(ctx, call) -> [output names]`, where `call`
(lamina.onnx.export.Call) holds the op with its arguments and its inputs' graph names and
sizes. A layer exporter writes a whole layer from its single input:
`fn(ctx, layer, path, input_name) -> [output names]`; a layer whose type has one is not
traced into. Only layers that no sequence of ops maps to ONNX well have one (recurrent
layers, whose loop ONNX's LSTM, GRU and RNN ops hold).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from lamina.nn.layer import Layer
from lamina.nn.registry import registered_name
from lamina.registry import Registry

OpExporter = Callable[[Any, Any], list[str]]
Exporter = Callable[[Any, Layer, str, str], list[str]]
OP_EXPORTERS = Registry("ONNX op exporter")  # Function class name -> fn(ctx, call)
MODULE_EXPORTERS = Registry("ONNX exporter")  # layer type -> fn(ctx, layer, path, x)


def register_op_exporter(op: str | type) -> Callable[[OpExporter], OpExporter]:
    """Register `fn(ctx, call) -> [output names]` for an op (a Function subclass or its
    name), for ops of your own (`lamina.autograd.Function` subclasses)."""
    name = op if isinstance(op, str) else op.__name__

    def decorate(fn: OpExporter) -> OpExporter:
        OP_EXPORTERS.add(name, fn)
        return fn

    return decorate


def register_onnx_exporter(layer_type: str) -> Callable[[Exporter], Exporter]:
    """Register `fn(ctx, layer, path, input_name) -> [output names]` for a layer type: the
    layer is then exported whole, its forward not traced."""
    def decorate(fn: Exporter) -> Exporter:
        MODULE_EXPORTERS.add(layer_type, fn)
        return fn

    return decorate


def module_exporter(layer: Layer) -> Exporter | None:
    kind = type(layer).__name__
    with contextlib.suppress(ValueError):  # an unregistered layer goes by its class name
        kind = registered_name(type(layer))
    return MODULE_EXPORTERS.get(kind)
