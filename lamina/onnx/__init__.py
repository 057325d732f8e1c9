"""ONNX export of any model, as `torch.onnx.export`: its forward is traced and each op
written as ONNX nodes (lamina.onnx.ops_*); the recurrent layers, whose loop ONNX's LSTM,
GRU and RNN ops hold, are written whole (lamina.onnx.modules).

The graph is built with the `onnx` package (an optional extra) and checked with
`onnx.checker`.
"""

from lamina.onnx import modules, ops_math, ops_nn, ops_shape  # noqa: F401
from lamina.onnx.export import export
from lamina.onnx.graph import ExportError
from lamina.onnx.registry import register_onnx_exporter, register_op_exporter

__all__ = ["ExportError", "export", "register_onnx_exporter", "register_op_exporter"]
