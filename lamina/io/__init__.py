"""Files: safetensors checkpoints (never pickle), PyTorch weights, ONNX export."""

from lamina.io import onnx_activation, onnx_attention, onnx_spatial  # noqa: F401  (exporters)
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
