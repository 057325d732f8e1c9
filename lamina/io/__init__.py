"""Files: safetensors checkpoints (never pickle)."""

from lamina.io.checkpoint import CheckpointError, load, read, save

__all__ = ["CheckpointError", "load", "read", "save"]
