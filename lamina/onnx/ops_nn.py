"""Op exporters of the network ops: activations, linear and embedding, normalisation,
convolution and pooling, and the recurrent cells' gate arithmetic."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.attention import causal_mask
from lamina.onnx.export import Call
from lamina.onnx.graph import Context
from lamina.onnx.ops_math import scalar
from lamina.onnx.registry import register_op_exporter
from lamina.onnx.sources import triangle


def _unary(onnx_op: str, **attrs: Any) -> Any:
    return lambda ctx, call: ctx.node(onnx_op, call.inputs[:1], call.hint, **attrs)


for _op, _onnx_op in [("ReLU", "Relu"), ("Sigmoid", "Sigmoid"), ("Tanh", "Tanh")]:
    register_op_exporter(_op)(_unary(_onnx_op))


@register_op_exporter("Softplus")
def _softplus(ctx: Context, call: Call) -> list[str]:
    """ONNX's Softplus, and PyTorch's switch to x itself past the threshold."""
    (x,) = call.inputs[:1]
    (y,) = ctx.node("Softplus", [x], call.hint)
    if call.fn.threshold is None:
        return [y]
    limit = ctx.constant(call.hint, np.array(call.fn.threshold, call.in_dtypes[0]))
    (past,) = ctx.node("Greater", [x, limit], call.hint)
    return ctx.node("Where", [past, x, y], call.hint)


@register_op_exporter("LeakyReLU")
def _leaky(ctx: Context, call: Call) -> list[str]:
    return ctx.node("LeakyRelu", call.inputs, call.hint, alpha=float(call.fn.slope))


@register_op_exporter("ELU")
def _elu(ctx: Context, call: Call) -> list[str]:
    return ctx.node("Elu", call.inputs, call.hint, alpha=float(call.fn.alpha))


@register_op_exporter("SiLU")
def _silu(ctx: Context, call: Call) -> list[str]:
    (x,) = call.inputs
    return ctx.node("Mul", [x, ctx.node("Sigmoid", [x], call.hint)[0]], call.hint)


@register_op_exporter("Softmax")
def _softmax(ctx: Context, call: Call) -> list[str]:
    return ctx.node("Softmax", call.inputs, call.hint, axis=int(call.fn.axis))


@register_op_exporter("AttentionSoftmax")
def _attention_softmax(ctx: Context, call: Call) -> list[str]:
    """softmax(x * scale + causal mask): the mask a constant, or made at run time where the
    scores' length follows a dynamic axis."""
    dtype = np.dtype(call.out_dtypes[0])
    (y,) = ctx.node("Mul", [call.inputs[0], scalar(ctx, call, call.fn.scale)], call.hint)
    if call.fn.causal:
        dims = call.in_dims[0][-2:]
        if all(isinstance(d, int) for d in dims):
            mask = ctx.constant(call.hint, causal_mask(*dims, dtype))
        else:
            mask = triangle(ctx, dims, 1, dtype.type(-np.inf), dtype.type(0))
        (y,) = ctx.node("Add", [y, mask], call.hint)
    return ctx.node("Softmax", [y], call.hint, axis=-1)


@register_op_exporter("LogSoftmax")
def _log_softmax(ctx: Context, call: Call) -> list[str]:
    return ctx.node("LogSoftmax", call.inputs, call.hint, axis=int(call.fn.axis))


@register_op_exporter("GELU")
def _gelu(ctx: Context, call: Call) -> list[str]:
    (x,) = call.inputs
    if ctx.opset >= 20:
        return ctx.node("Gelu", [x], call.hint, approximate=call.fn.approximate)
    # Before opset 20 there is no Gelu op: x * Phi(x), or its tanh form.
    def mul(a: str, b: str) -> str:
        return ctx.node("Mul", [a, b], call.hint)[0]

    if call.fn.approximate == "tanh":
        cube = mul(mul(x, x), x)
        inner = ctx.node("Add", [x, mul(cube, scalar(ctx, call, 0.044715))], call.hint)[0]
        t = ctx.node("Tanh", [mul(inner, scalar(ctx, call, np.sqrt(2 / np.pi)))], call.hint)[0]
    else:
        scaled = ctx.node("Div", [x, scalar(ctx, call, np.sqrt(2))], call.hint)[0]
        t = ctx.node("Erf", [scaled], call.hint)[0]
    t = ctx.node("Add", [t, scalar(ctx, call, 1.0)], call.hint)[0]
    return [mul(mul(x, scalar(ctx, call, 0.5)), t)]


@register_op_exporter("Linear")
def _linear(ctx: Context, call: Call) -> list[str]:
    x, w, *b = call.inputs
    if call.constants[1] is not None:  # a weight: stored transposed, as MatMul takes it
        wt = ctx.constant(f"{w}_t", np.ascontiguousarray(call.constants[1].T))
    else:
        wt = ctx.node("Transpose", [w], call.hint, perm=[1, 0])[0]
    (y,) = ctx.node("MatMul", [x, wt], call.hint)
    return ctx.node("Add", [y, b[0]], call.hint) if b else [y]


@register_op_exporter("Embedding")
def _embedding(ctx: Context, call: Call) -> list[str]:
    ids, w = call.inputs
    return ctx.node("Gather", [w, ids], call.hint, axis=0)


def _affine(ctx: Context, call: Call, channels: int) -> tuple[str, str]:
    """Weight and bias of a normalisation (ones and zeros where it has none)."""
    dtype = call.out_dtypes[0]
    names = call.inputs[1:] + [""] * (3 - len(call.inputs))
    weight = names[0] or ctx.constant(call.hint, np.ones(channels, dtype))
    bias = names[1] or ctx.constant(call.hint, np.zeros(channels, dtype))
    return weight, bias


@register_op_exporter("BatchNorm")
def _batch_norm(ctx: Context, call: Call) -> list[str]:
    fn = call.fn
    if fn.training:
        raise ctx.fail("normalises by each batch's statistics (training, or no running "
                       "statistics), which ONNX's BatchNormalization does not do in inference")
    channels = call.in_dims[0][1]
    weight, bias = _affine(ctx, call, channels)
    dtype = call.out_dtypes[0]
    return ctx.node("BatchNormalization", [
        call.inputs[0], weight, bias, ctx.constant(call.hint, fn.running_mean.astype(dtype)),
        ctx.constant(call.hint, fn.running_var.astype(dtype))], call.hint,
        epsilon=float(fn.eps))


@register_op_exporter("LayerNorm")
def _layer_norm(ctx: Context, call: Call) -> list[str]:
    if ctx.opset < 17:
        raise ctx.fail(f"LayerNormalization needs opset_version >= 17; got {ctx.opset}")
    shape = tuple(call.fn.normalized_shape)
    dtype = call.out_dtypes[0]
    names = call.inputs[1:] + [""] * (3 - len(call.inputs))
    weight = names[0] or ctx.constant(call.hint, np.ones(shape, dtype))
    inputs = [call.inputs[0], weight] + ([names[1]] if names[1] else [])
    return ctx.node("LayerNormalization", inputs, call.hint, axis=-len(shape),
                    epsilon=float(call.fn.eps))


@register_op_exporter("GroupNorm")
def _group_norm(ctx: Context, call: Call) -> list[str]:
    # Opset 17 has no GroupNormalization (and 18's scales per group, not per channel):
    # instance norm over (N, groups, rest), then the per-channel affine as a batch norm of
    # mean 0 and variance 1, which finds the channel axis at any rank.
    g, c, dtype = call.fn.groups, call.in_dims[0][1], call.out_dtypes[0]
    x = call.inputs[0]
    (grouped,) = ctx.node("Reshape", [x, ctx.ints(call.hint, [0, g, -1])], call.hint)
    (normed,) = ctx.node("InstanceNormalization", [
        grouped, ctx.constant(call.hint, np.ones(g, dtype)),
        ctx.constant(call.hint, np.zeros(g, dtype))], call.hint, epsilon=float(call.fn.eps))
    (y,) = ctx.node("Reshape", [normed, ctx.node("Shape", [x], call.hint)[0]], call.hint)
    if len(call.inputs) == 1:
        return [y]
    weight, bias = _affine(ctx, call, c)
    return ctx.node("BatchNormalization", [
        y, weight, bias, ctx.constant(call.hint, np.zeros(c, dtype)),
        ctx.constant(call.hint, np.ones(c, dtype))], call.hint, epsilon=0.0)


@register_op_exporter("Standardize")
def _standardize(ctx: Context, call: Call) -> list[str]:
    fn, rank, dtype = call.fn, len(call.in_dims[0]), call.out_dtypes[0]
    shape = (-1,) + (1,) * (rank - fn.axis % rank - 1)
    mean = ctx.constant(call.hint, fn.mean.reshape(shape).astype(dtype))
    std = ctx.constant(call.hint, fn.std.reshape(shape).astype(dtype))
    (centred,) = ctx.node("Sub", [call.inputs[0], mean], call.hint)
    return ctx.node("Div", [centred, std], call.hint)


def _spatial(values: Any, nd: int) -> list[int]:
    """A 1-D op's (1, n) pair (it runs over a height of 1) as [n]; a 2-D op's as it is."""
    return [int(v) for v in values][-nd:]


@register_op_exporter("Conv")
def _conv(ctx: Context, call: Call) -> list[str]:
    fn, nd = call.fn, call.fn.nd
    kernel = [int(k) for k in call.in_dims[1][2:]]
    pads = _spatial(fn.padding, nd)
    return ctx.node("Conv", call.inputs, call.hint, kernel_shape=kernel,
                    strides=_spatial(fn.stride, nd), pads=pads + pads,
                    dilations=_spatial(fn.dilation, nd), group=int(fn.groups))


@register_op_exporter("ConvTranspose")
def _conv_transpose(ctx: Context, call: Call) -> list[str]:
    fn, nd = call.fn, call.fn.nd
    kernel = [int(k) for k in call.in_dims[1][2:]]
    pads = _spatial(fn.padding, nd)
    return ctx.node("ConvTranspose", call.inputs, call.hint, kernel_shape=kernel,
                    strides=_spatial(fn.stride, nd), pads=pads + pads,
                    dilations=_spatial(fn.dilation, nd), group=int(fn.groups),
                    output_padding=_spatial(fn.output_padding, nd))


def _pool(onnx_op: str, **attrs: Any) -> Any:
    def export(ctx: Context, call: Call) -> list[str]:
        fn = call.fn
        pads = _spatial(fn.p, fn.nd)
        return ctx.node(onnx_op, call.inputs, call.hint, kernel_shape=_spatial(fn.k, fn.nd),
                        strides=_spatial(fn.s, fn.nd), pads=pads + pads, **attrs)
    return export


register_op_exporter("MaxPool")(_pool("MaxPool"))
register_op_exporter("AvgPool")(_pool("AveragePool", count_include_pad=1))


@register_op_exporter("AdaptiveAvgPool")
def _adaptive_avg_pool(ctx: Context, call: Call) -> list[str]:
    spatial = call.in_dims[0][2:]
    sizes = [n if s is None else int(s) for n, s in zip(spatial, call.fn.sizes)]
    if all(s == 1 for s in sizes):
        return ctx.node("GlobalAveragePool", call.inputs, call.hint)
    if not all(isinstance(n, int) and n % m == 0 for n, m in zip(spatial, sizes)):
        raise ctx.fail(f"output_size {tuple(sizes)} from input size {tuple(spatial)}: only "
                       "global pooling (output size 1) or sizes that divide the input's "
                       "export (as AvgPool with kernel_size = stride = input // output)")
    kernel = [n // m for n, m in zip(spatial, sizes)]
    return ctx.node("AveragePool", call.inputs, call.hint, kernel_shape=kernel, strides=kernel)


@register_op_exporter("LSTMCell")
def _lstm_cell(ctx: Context, call: Call) -> list[str]:
    gates, c_prev = call.inputs
    hint = call.hint
    split = {"num_outputs": 4} if ctx.opset >= 18 else {}  # the count became required
    i, f, g, o = ctx.node("Split", [gates], hint, n_outputs=4, axis=-1, **split)
    i, f, o = (ctx.node("Sigmoid", [a], hint)[0] for a in (i, f, o))
    (g,) = ctx.node("Tanh", [g], hint)
    (c,) = ctx.node("Add", [ctx.node("Mul", [f, c_prev], hint)[0],
                            ctx.node("Mul", [i, g], hint)[0]], hint)
    (h,) = ctx.node("Mul", [o, ctx.node("Tanh", [c], hint)[0]], hint)
    return [h, c]


@register_op_exporter("GRUCell")
def _gru_cell(ctx: Context, call: Call) -> list[str]:
    gx, gh, h_prev = call.inputs
    hint = call.hint
    split = {"num_outputs": 3} if ctx.opset >= 18 else {}
    xr, xz, xn = ctx.node("Split", [gx], hint, n_outputs=3, axis=-1, **split)
    hr, hz, hn = ctx.node("Split", [gh], hint, n_outputs=3, axis=-1, **split)
    r, z = (ctx.node("Sigmoid", [ctx.node("Add", [a, b], hint)[0]], hint)[0]
            for a, b in ((xr, hr), (xz, hz)))
    (n,) = ctx.node("Tanh", [ctx.node("Add", [xn, ctx.node("Mul", [r, hn], hint)[0]],
                                      hint)[0]], hint)
    # h = n + z * (h_prev - n), which is (1 - z) * n + z * h_prev
    (d,) = ctx.node("Sub", [h_prev, n], hint)
    return ctx.node("Add", [n, ctx.node("Mul", [z, d], hint)[0]], hint)


@register_op_exporter("Interpolate")
def _interpolate(ctx: Context, call: Call) -> list[str]:
    """Resize with the coordinate rule of PyTorch's mode: by the scale factor where one is
    given (as PyTorch maps coordinates then), else to the output's size."""
    fn, nd = call.fn, len(call.in_dims[0]) - 2
    if fn.mode == "nearest":
        attrs = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                 "nearest_mode": "floor"}
    elif fn.mode in ("linear", "bilinear", "trilinear", "bicubic"):
        attrs = {"mode": "cubic" if fn.mode == "bicubic" else "linear",
                 "coordinate_transformation_mode":
                 "align_corners" if fn.align_corners else "pytorch_half_pixel"}
        if fn.mode == "bicubic":  # PyTorch's, where ONNX defaults to -0.5 (PIL's, as
            attrs["cubic_coeff_a"] = -0.5 if fn.antialias else -0.75  # antialias takes)
        if fn.antialias:
            if ctx.opset < 18:
                raise ctx.fail("antialias=True needs ONNX Resize's antialias, from opset 18; "
                               "export with opset_version=18 or later")
            if fn.align_corners:  # PyTorch centres its filters where ONNX's rule cannot
                raise ctx.fail("antialias=True with align_corners=True has no ONNX Resize "
                               "rule; export with align_corners=False")
            # exclude_outside: the filter renormalised over the samples inside, as PyTorch's
            attrs.update(antialias=1, exclude_outside=1)
    else:
        raise ctx.fail(f"mode {fn.mode!r} has no ONNX Resize rule here; use nearest, "
                       "(bi/tri)linear or bicubic")
    if fn.scale_factor is not None and not fn.recompute:
        factors = fn.scale_factor if isinstance(fn.scale_factor, (list, tuple)) else (
            [fn.scale_factor] * nd)
        scales = ctx.constant(call.hint, np.array([1, 1, *factors], np.float32))
        return ctx.node("Resize", [call.inputs[0], "", scales], call.hint, **attrs)
    sizes = ctx.shape_tensor(call.out_dims[0], call.hint)
    return ctx.node("Resize", [call.inputs[0], "", "", sizes], call.hint, **attrs)
