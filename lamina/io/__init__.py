"""Files: safetensors checkpoints (never pickle), PyTorch weights, ONNX export."""

from lamina.io import (  # noqa: F401  (they register exporters)
    onnx_activation,
    onnx_attention,
    onnx_cell,
    onnx_spatial,
)
from lamina.io.checkpoint import CheckpointError, load, read, save
from lamina.io.onnx_export import ExportError, export_onnx, register_onnx_exporter
from lamina.io.torch_state import load_torch_state, save_torch_state

__all__ = [
    "CheckpointError",
    "ExportError",
    "export_onnx",
    "load",
    "load_torch_state",
    "read",
    "register_onnx_exporter",
    "save",
    "save_torch_state",
]
