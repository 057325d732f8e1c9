"""Layer exporters of resampling: Upsample, as ONNX's Resize with the coordinate rule of
PyTorch's mode, its output size read from the input at run time."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.onnx.graph import Context
from lamina.onnx.registry import register_onnx_exporter


def _dims(ctx: Context, x: str, path: str, start: int, stop: int | None = None) -> list[str]:
    """x's sizes on axes start..stop (one axis by default), as a 1-D int64 tensor, at run
    time (Shape's own start and stop arrived only in opset 15)."""
    (shape,) = ctx.node("Shape", [x], path)
    stop = start + 1 if stop is None else stop
    return ctx.node("Slice", [shape, ctx.ints(path, [start]), ctx.ints(path, [stop])], path)


@register_onnx_exporter("Upsample")
def _upsample(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    """Resize with the coordinate rule PyTorch's mode uses; scales for a scale_factor, else
    the output's full shape (the input's N, C and the layer's size)."""
    if isinstance(layer.scale_factor, (list, tuple)):
        scales = ctx.constant(f"{path}.scales", np.array([1, 1, *layer.scale_factor],
                                                         np.float32))
        inputs = [x, "", scales]
    elif layer.scale_factor is not None:  # one factor for every spatial axis, however many
        (spatial,) = _dims(ctx, x, path, 2, np.iinfo(np.int64).max)
        (count,) = ctx.node("Shape", [spatial], path)
        (factors,) = ctx.node("Expand", [
            ctx.constant(f"{path}.factor", np.array([layer.scale_factor], np.float32)), count],
            path)
        (scales,) = ctx.node("Concat", [
            ctx.constant(f"{path}.ones", np.ones(2, np.float32)), factors], path, axis=0)
        inputs = [x, "", scales]
    else:
        size = layer.size if isinstance(layer.size, (list, tuple)) else (layer.size,)
        (batch_channels,) = _dims(ctx, x, path, 0, 2)
        (sizes,) = ctx.node("Concat", [batch_channels, ctx.ints(path, size)], path, axis=0)
        inputs = [x, "", "", sizes]
    if layer.mode == "nearest":
        attrs = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                 "nearest_mode": "floor"}
    else:
        attrs = {"mode": "linear", "coordinate_transformation_mode":
                 "align_corners" if layer.align_corners else "pytorch_half_pixel"}
    return ctx.node("Resize", inputs, path, **attrs)
