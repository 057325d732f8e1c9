"""Files: safetensors checkpoints (never pickle), PyTorch weights, ONNX export."""

from lamina.io.checkpoint import CheckpointError, load, read, save
from lamina.io.onnx import export_onnx
from lamina.io.torch_state import load_torch_state, save_torch_state
from lamina.onnx import ExportError, register_onnx_exporter, register_op_exporter

__all__ = [
    "CheckpointError",
    "ExportError",
    "export_onnx",
    "load",
    "load_torch_state",
    "read",
    "register_onnx_exporter",
    "register_op_exporter",
    "save",
    "save_torch_state",
]
