"""ONNX export of any model, as `torch.onnx.export`: its forward is traced and each op
written as ONNX nodes (lamina.onnx.ops_*); layers that ONNX holds better whole (recurrent
layers, resampling) have layer exporters (lamina.onnx.modules*).

The graph is built with the `onnx` package (an optional extra) and checked with
`onnx.checker`.
"""

from lamina.onnx import modules, modules_spatial, ops_math, ops_nn, ops_shape  # noqa: F401
from lamina.onnx.export import export
from lamina.onnx.graph import ExportError
from lamina.onnx.registry import register_onnx_exporter, register_op_exporter

__all__ = ["ExportError", "export", "register_onnx_exporter", "register_op_exporter"]
