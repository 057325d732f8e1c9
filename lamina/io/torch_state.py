"""PyTorch weights in and out, as safetensors files of state dicts.

lamina's parameter names, shapes and layouts are PyTorch's, so no mapping is needed: a
state dict saved from a torch model loads into the lamina model of the same architecture,
and a lamina model's file loads with torch's `load_state_dict`.
"""

from __future__ import annotations

import os
from pathlib import Path

from lamina.io.checkpoint import _contiguous, _safetensors, atomic_write, read
from lamina.nn.layer import Layer
from lamina.nn.state_dict import state_arrays


def save_torch_state(model: Layer, path: str | os.PathLike) -> Path:
    """Write the model's state dict as a plain safetensors file for PyTorch.

    Load it in PyTorch with
    `torch_model.load_state_dict(safetensors.torch.load_file(path))`.
    """
    state = {k: _contiguous(v) for k, v in state_arrays(model).items()}
    return atomic_write(path, _safetensors().save(state))


def load_torch_state(model: Layer, path: str | os.PathLike, strict: bool = True) -> dict:
    """Load a safetensors file written from a PyTorch state dict into a lamina model.

    Raises:
        CheckpointError: the file is unreadable; KeyError or ValueError: names or shapes
            do not fit (every mismatch listed).
    """
    arrays, _ = read(path)
    return model.load_state_dict(arrays, strict=strict)
