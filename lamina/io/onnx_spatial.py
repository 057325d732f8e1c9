"""ONNX exporters of the spatial family: convolutions (plain and transposed), max, average
and adaptive average pooling, and Upsample (Resize with PyTorch's coordinate rules)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.conv_padding import same_padding
from lamina.functions.pooling import output_sizes
from lamina.io.onnx_export import (
    Context,
    Exporter,
    ExportError,
    _dims,
    _ints,
    _w,
    register_onnx_exporter,
)


def _conv(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    inputs = [x, ctx.constant(f"{path}.weight", _w(layer, "weight"))]
    if layer.bias is not None:
        inputs.append(ctx.constant(f"{path}.bias", _w(layer, "bias")))
    if getattr(layer, "padding_mode", "zeros") != "zeros":
        raise ExportError(f"{path or 'the model'} ({type(layer).__name__}): ONNX's Conv pads "
                          f"with zeros only; got padding_mode={layer.padding_mode!r}")
    if isinstance(layer.padding, str):
        sides = same_padding(layer.padding, layer.kernel_size, layer.stride, layer.dilation,
                             type(layer).__name__)
        pads = [lo for lo, _ in sides] + [hi for _, hi in sides]
    else:
        pads = list(layer.padding) * 2
    extra = {"output_padding": list(layer.output_padding)} if layer.transposed else {}
    return ctx.node("ConvTranspose" if layer.transposed else "Conv", inputs, path,
                    kernel_shape=list(layer.kernel_size), strides=list(layer.stride),
                    pads=pads, dilations=list(layer.dilation), group=layer.groups, **extra)


for _kind in ("Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"):
    register_onnx_exporter(_kind)(_conv)


def _pool(op: str, nd: int) -> Exporter:
    def export(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
        def tup(v: Any) -> list[int]:
            return [int(v)] * nd if isinstance(v, (int, np.integer)) else [int(a) for a in v]

        k = tup(layer.kernel_size)
        s = tup(layer.stride) if layer.stride is not None else k
        options = layer.options
        attrs: dict[str, Any] = {"kernel_shape": k, "strides": s,
                                 "pads": tup(layer.padding) * 2,
                                 "ceil_mode": int(options["ceil_mode"])}
        if op == "AveragePool":
            if options.get("divisor_override"):
                raise ExportError(f"{path or 'the model'} ({type(layer).__name__}): ONNX's "
                                  "AveragePool has no divisor_override")
            attrs["count_include_pad"] = int(options["count_include_pad"])
        else:
            attrs["dilations"] = tup(options["dilation"])
        return ctx.node(op, [x], path, **attrs)

    return export


for _nd in (1, 2):
    register_onnx_exporter(f"MaxPool{_nd}d")(_pool("MaxPool", _nd))
    register_onnx_exporter(f"AvgPool{_nd}d")(_pool("AveragePool", _nd))


def _adaptive_pool(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    size, name = layer.output_size, type(layer).__name__
    if all(m == 1 for m in output_sizes(size, layer.nd, name)):
        return ctx.node("GlobalAveragePool", [x], path)
    raise ExportError(f"{path or 'the model'} ({name}): only output_size 1 (global average "
                      f"pooling) exports, since the graph does not fix the input's size; got "
                      f"output_size {size!r}. For one input size, {name[8:]} with kernel_size "
                      "= stride = input size // output size gives the same where it divides")


register_onnx_exporter("AdaptiveAvgPool1d")(_adaptive_pool)
register_onnx_exporter("AdaptiveAvgPool2d")(_adaptive_pool)


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
        (sizes,) = ctx.node("Concat", [batch_channels, _ints(ctx, path, *size)], path, axis=0)
        inputs = [x, "", "", sizes]
    if layer.mode == "nearest":
        attrs = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                 "nearest_mode": "floor"}
    else:
        attrs = {"mode": "linear", "coordinate_transformation_mode":
                 "align_corners" if layer.align_corners else "pytorch_half_pixel"}
    return ctx.node("Resize", inputs, path, **attrs)
