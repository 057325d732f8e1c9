"""`export_onnx`: lamina's earlier call shape of ONNX export, kept beside PyTorch's
`lamina.onnx.export`: one input, its batch axis dynamic."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lamina.nn.layer import Layer
from lamina.onnx import export


def export_onnx(model: Layer, example_input: Any, path: str | os.PathLike, opset: int = 17,
                batch_axis: int = 0) -> Path:
    """Write `model` (in eval mode) as an ONNX file whose input's batch axis is dynamic.

    The same as `lamina.onnx.export(model, example_input, path, input_names=["input"],
    dynamic_axes={"input": {batch_axis: "batch"}}, opset_version=opset)`: outputs are
    named "output" (or "output_0", ...), and their axes that follow the batch are dynamic.

    Examples:
        >>> lm.io.export_onnx(model, x[:1], "model.onnx")
    """
    result = export(model, example_input, path, input_names=["input"],
                    dynamic_axes={"input": {batch_axis: "batch"}}, opset_version=opset)
    assert result is not None
    return result
