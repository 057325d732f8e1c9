"""ONNX export: each registered layer type has a small exporter that emits its ONNX nodes.

The graph is built with the `onnx` package (an optional extra) and checked with
`onnx.checker`; the batch dimension is dynamic. Recurrent layers become ONNX's RNN, LSTM
and GRU ops, with PyTorch's gate blocks reordered to ONNX's. The attention family's
exporters live in onnx_attention, the convolution, pooling and resampling family's in
onnx_spatial.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import registered_name
from lamina.registry import Registry

Exporter = Callable[["Context", Layer, str, str], list[str]]
_EXPORTERS = Registry("ONNX exporter")  # layer type -> fn(ctx, layer, path, x)


class ExportError(ValueError):
    """A model (or one of its layers) cannot be written as ONNX; the message names it."""


def register_onnx_exporter(layer_type: str) -> Callable[[Exporter], Exporter]:
    """Register `fn(ctx, layer, path, input_name) -> [output names]` for a layer type."""
    def decorate(fn: Exporter) -> Exporter:
        _EXPORTERS.add(layer_type, fn)
        return fn

    return decorate


class Context:
    """Collects nodes and initializers while layers export themselves."""

    def __init__(self, opset: int) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper, self.opset = helper, numpy_helper, opset
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self.names: set[str] = set()

    def name(self, hint: str) -> str:
        base = hint.replace(".", "_") or "v"
        name, n = base, 1
        while name in self.names:
            n += 1
            name = f"{base}_{n}"
        self.names.add(name)
        return name

    def constant(self, hint: str, array: Any) -> str:
        name = self.name(hint)
        self.initializers.append(self.numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op: str, inputs: list[str], hint: str, n_outputs: int = 1,
             **attrs: Any) -> list[str]:
        outputs = [self.name(f"{hint}_{op}{'' if n_outputs == 1 else i}")
                   for i in range(n_outputs)]
        self.nodes.append(self.helper.make_node(op, inputs, outputs, name=self.name(hint + op),
                                                **attrs))
        return outputs


def export_layer(ctx: Context, layer: Layer, path: str, x: str) -> list[str]:
    """Emit the nodes of one layer (recursively for containers); return its output names."""
    kind = type(layer).__name__
    with contextlib.suppress(ValueError):  # an unregistered layer goes by its class name
        kind = registered_name(type(layer))
    exporter = _EXPORTERS.get(kind)
    if exporter is None:
        where = path or "the model"
        raise ExportError(f"{where} ({kind}): no ONNX exporter for this layer type; "
                          "register one with lamina.io.register_onnx_exporter")
    return exporter(ctx, layer, path, x)


def export_onnx(model: Layer, example_input: Any, path: str | os.PathLike,
                opset: int = 17, batch_axis: int = 0) -> Path:
    """Write `model` (in eval mode) as an ONNX file with a dynamic batch dimension.

    Args:
        model: a Layer whose every layer type has an exporter (all of lamina.nn's have).
        example_input: a batch (array or Tensor) giving the input's dtype and shape.
        path: the .onnx file to write.
        opset: the ONNX opset (>= 14).
        batch_axis: the input's batch axis (1 for time-major recurrent models). The
            outputs' batch axes are found by running the model at two batch sizes.

    A stateful recurrent layer exports as one call from zero state: the graph is
    stateless, each run independent.

    Returns:
        The path written.

    Raises:
        ExportError: a layer cannot be exported (its path and type are named).
        ImportError: the onnx package is not installed.

    Examples:
        >>> lm.io.export_onnx(model, x[:1], "model.onnx")
    """
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("ONNX export needs the onnx package: pip install 'lamina[onnx]'") from e
    if opset < 14:
        raise ExportError(f"export_onnx: opset must be >= 14; got {opset}")
    x = example_input.array if isinstance(example_input, Tensor) else np.asarray(example_input)
    ctx = Context(opset)
    was_training = model.training
    model.eval()
    try:
        results = _run(model, x)  # first: a layer may note what export needs (an input rank)
        outputs = export_layer(ctx, model, "", "input")
        # One more sample: the axes whose length follows it are the outputs' batch axes.
        grown = _run(model, np.concatenate([x, x.take([0], axis=batch_axis)], axis=batch_axis))
    finally:
        model.train(was_training)
    if len(results) != len(outputs):
        raise ExportError(f"export_onnx: the model returns {len(results)} outputs, the graph "
                          f"{len(outputs)}")

    def info(name: str, a: np.ndarray, dynamic: list[int]) -> Any:
        dims: list[Any] = ["batch" if i in dynamic else n for i, n in enumerate(a.shape)]
        return onnx.helper.make_tensor_value_info(
            name, onnx.helper.np_dtype_to_tensor_dtype(a.dtype), dims)

    graph_in = [info("input", x, [batch_axis])]
    graph_out = [info(n, a, [i for i, (p, q) in enumerate(zip(a.shape, b.shape)) if p != q])
                 for n, a, b in zip(outputs, results, grown)]
    graph = onnx.helper.make_graph(ctx.nodes, "lamina", graph_in, graph_out, ctx.initializers)
    opsets = [onnx.helper.make_opsetid("", opset)]
    proto = onnx.helper.make_model(graph, opset_imports=opsets, producer_name="lamina")
    # The lowest IR version the opset allows, so older runtimes load the file too.
    proto.ir_version = onnx.helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(proto, full_check=True)
    from lamina.io.checkpoint import atomic_write

    return atomic_write(path, proto.SerializeToString())


def _run(model: Layer, x: np.ndarray) -> list[np.ndarray]:
    """The model's outputs on x from zero recurrent state; carried states are restored."""
    from lamina.autograd.grad_mode import no_grad
    from lamina.nn.outputs import flatten

    stateful = [layer for _, layer in model.named_layers() if hasattr(layer, "reset_state")]
    saved = [layer.state for layer in stateful]
    for layer in stateful:
        layer.reset_state()
    try:
        with no_grad():
            return [t.array for t in flatten(model(Tensor(x)))]
    finally:
        for layer, state in zip(stateful, saved):
            layer.state = state


# -- exporters ---------------------------------------------------------------------------------
def _w(layer: Layer, name: str) -> np.ndarray:
    return getattr(layer, name).array


def _ints(ctx: Context, path: str, *values: int) -> str:
    return ctx.constant(f"{path}.ints", np.array(values, np.int64))


def _dims(ctx: Context, x: str, path: str, start: int, stop: int | None = None) -> list[str]:
    """x's sizes on axes start..stop (one axis by default), as a 1-D int64 tensor, at run
    time (Shape's own start and stop arrived only in opset 15)."""
    (shape,) = ctx.node("Shape", [x], path)
    stop = start + 1 if stop is None else stop
    return ctx.node("Slice", [shape, _ints(ctx, path, start), _ints(ctx, path, stop)], path)


@register_onnx_exporter("Sequential")
def _sequential(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    outs = [x]
    for i, child in enumerate(layer):
        if len(outs) != 1:
            raise ExportError(f"{path or 'model'}[{i}]: the layer before returns "
                              f"{len(outs)} outputs; use output='sequence' or 'last'")
        outs = export_layer(ctx, child, f"{path}.{i}" if path else str(i), outs[0])
    return outs


def _chain(ctx: Context, layers: list[tuple[str, Layer]], path: str, x: str) -> str:
    """Export layers one after another from x; each must give one output."""
    for name, child in layers:
        where = f"{path}.{name}" if path else name
        outs = export_layer(ctx, child, where, x)
        if len(outs) != 1:
            raise ExportError(f"{where}: returns {len(outs)} outputs where the next layer "
                              "takes one; use output='sequence' or 'last'")
        (x,) = outs
    return x


@register_onnx_exporter("Identity")
def _identity(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("Identity", [x], path)


@register_onnx_exporter("Residual")
def _residual(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    body = [(n, c) for n, c in layer.named_children() if n != "shortcut"]
    skip = [(n, c) for n, c in layer.named_children() if n == "shortcut"]
    return ctx.node("Add", [_chain(ctx, body, path, x), _chain(ctx, skip, path, x)], path)


@register_onnx_exporter("Concat")
def _concat(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    outs = [_chain(ctx, [branch], path, x) for branch in layer.named_children()]
    return ctx.node("Concat", outs, path, axis=int(layer.axis))


@register_onnx_exporter("LayerNorm")
def _layer_norm(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    if ctx.opset < 17:
        raise ExportError(f"{path or 'the model'} (LayerNorm): LayerNormalization needs "
                          f"opset >= 17; got {ctx.opset}")
    shape = layer.normalized_shape
    weight = _w(layer, "weight") if layer.weight is not None else np.ones(shape, np.float32)
    inputs = [x, ctx.constant(f"{path}.weight", weight)]
    if layer.bias is not None:
        inputs.append(ctx.constant(f"{path}.bias", _w(layer, "bias")))
    return ctx.node("LayerNormalization", inputs, path, axis=-len(shape),
                    epsilon=float(layer.eps))


@register_onnx_exporter("Linear")
def _linear(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    wt = ctx.constant(f"{path}.weight_t", _w(layer, "weight").T.copy())
    (y,) = ctx.node("MatMul", [x, wt], path)
    if layer.bias is None:
        return [y]
    return ctx.node("Add", [y, ctx.constant(f"{path}.bias", _w(layer, "bias"))], path)


def _batch_norm(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    if not layer.track_running_stats:
        raise ExportError(f"{path or 'the model'} ({type(layer).__name__}): without running "
                          "statistics it normalises by each batch's, which ONNX's "
                          "BatchNormalization does not do in inference")
    c = layer.num_features
    gamma = _w(layer, "weight") if layer.weight is not None else np.ones(c, np.float32)
    beta = _w(layer, "bias") if layer.bias is not None else np.zeros(c, np.float32)
    inputs = [x, ctx.constant(f"{path}.weight", gamma), ctx.constant(f"{path}.bias", beta),
              ctx.constant(f"{path}.running_mean", _w(layer, "running_mean")),
              ctx.constant(f"{path}.running_var", _w(layer, "running_var"))]
    return ctx.node("BatchNormalization", inputs, path, epsilon=float(layer.eps))


register_onnx_exporter("BatchNorm1d")(_batch_norm)
register_onnx_exporter("BatchNorm2d")(_batch_norm)


@register_onnx_exporter("Standardize")
def _standardize(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    mean, std = _w(layer, "mean"), _w(layer, "std")
    if layer.axis < 0:  # broadcasts from the right at any rank
        shape = (-1,) + (1,) * (-layer.axis - 1)
        (centred,) = ctx.node("Sub", [x, ctx.constant(f"{path}.mean", mean.reshape(shape))],
                              path)
        return ctx.node("Div", [centred, ctx.constant(f"{path}.std", std.reshape(shape))], path)
    if layer.axis != 1:
        raise ExportError(f"{path or 'the model'} (Standardize): export takes axis 1 or a "
                          f"negative axis; got axis {layer.axis} (count it from the end)")
    # Axis 1 at a rank the graph does not know: batch norm's channel axis, by the same
    # statistics (epsilon 0, so var = std**2 gives back std).
    c = layer.num_features
    inputs = [x, ctx.constant(f"{path}.one", np.ones(c, mean.dtype)),
              ctx.constant(f"{path}.zero", np.zeros(c, mean.dtype)),
              ctx.constant(f"{path}.mean", mean), ctx.constant(f"{path}.var", std * std)]
    return ctx.node("BatchNormalization", inputs, path, epsilon=0.0)


@register_onnx_exporter("GroupNorm")
def _group_norm(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    # Opset 17 has no GroupNormalization (and 18's scales per group, not per channel):
    # instance norm over (N, groups, rest), then the per-channel affine as a batch norm of
    # mean 0 and variance 1, which finds the channel axis at any rank.
    g, c, dtype = layer.num_groups, layer.num_channels, np.float32
    grouped_shape = ctx.constant(f"{path}.grouped_shape", np.array([0, g, -1], np.int64))
    (grouped,) = ctx.node("Reshape", [x, grouped_shape], path)
    (normed,) = ctx.node("InstanceNormalization", [
        grouped, ctx.constant(f"{path}.group_one", np.ones(g, dtype)),
        ctx.constant(f"{path}.group_zero", np.zeros(g, dtype))], path, epsilon=float(layer.eps))
    (shape,) = ctx.node("Shape", [x], path)
    (y,) = ctx.node("Reshape", [normed, shape], path)
    if layer.weight is None:
        return [y]
    bias = _w(layer, "bias") if layer.bias is not None else np.zeros(c, dtype)
    inputs = [y, ctx.constant(f"{path}.weight", _w(layer, "weight")),
              ctx.constant(f"{path}.bias", bias),
              ctx.constant(f"{path}.zero", np.zeros(c, dtype)),
              ctx.constant(f"{path}.one", np.ones(c, dtype))]
    return ctx.node("BatchNormalization", inputs, path, epsilon=0.0)


def _unary(op: str, **attrs: Any) -> Exporter:
    return lambda ctx, layer, path, x: ctx.node(op, [x], path, **attrs)


register_onnx_exporter("Dropout")(_unary("Identity"))  # exported in eval mode
register_onnx_exporter("ReLU")(_unary("Relu"))
register_onnx_exporter("Sigmoid")(_unary("Sigmoid"))
register_onnx_exporter("Tanh")(_unary("Tanh"))


@register_onnx_exporter("LeakyReLU")
def _leaky(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("LeakyRelu", [x], path, alpha=float(layer.negative_slope))


@register_onnx_exporter("ELU")
def _elu(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("Elu", [x], path, alpha=float(layer.alpha))


@register_onnx_exporter("SiLU")
def _silu(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    (s,) = ctx.node("Sigmoid", [x], path)
    return ctx.node("Mul", [x, s], path)


@register_onnx_exporter("Softplus")
def _softplus(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    if layer.beta == 1:
        return ctx.node("Softplus", [x], path)
    beta = ctx.constant(f"{path}.beta", np.array(layer.beta, np.float32))
    (scaled,) = ctx.node("Mul", [x, beta], path)
    (y,) = ctx.node("Softplus", [scaled], path)
    return ctx.node("Div", [y, beta], path)


@register_onnx_exporter("Softmax")
def _softmax(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("Softmax", [x], path, axis=int(layer.dim) if layer.dim is not None else -1)


@register_onnx_exporter("GELU")
def _gelu(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    # Opset 17 has no Gelu op: spell out x * Phi(x) (or its tanh form).
    def c(name: str, value: float) -> str:
        return ctx.constant(f"{path}.{name}", np.array(value, np.float32))

    if layer.approximate == "tanh":
        (x3,) = ctx.node("Mul", [x, x], path)
        (x3,) = ctx.node("Mul", [x3, x], path)
        (inner,) = ctx.node("Mul", [x3, c("k3", 0.044715)], path)
        (inner,) = ctx.node("Add", [x, inner], path)
        (inner,) = ctx.node("Mul", [inner, c("k", float(np.sqrt(2 / np.pi)))], path)
        (t,) = ctx.node("Tanh", [inner], path)
    else:
        (scaled,) = ctx.node("Div", [x, c("sqrt2", float(np.sqrt(2)))], path)
        (t,) = ctx.node("Erf", [scaled], path)
    (t,) = ctx.node("Add", [t, c("one", 1.0)], path)
    (half,) = ctx.node("Mul", [x, c("half", 0.5)], path)
    return ctx.node("Mul", [half, t], path)


@register_onnx_exporter("Flatten")
def _flatten(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    if layer.end_dim != -1 or layer.start_dim < 0:
        raise ExportError(f"{path} (Flatten): only end_dim=-1 with start_dim >= 0 exports; "
                          f"got start_dim={layer.start_dim}, end_dim={layer.end_dim}")
    shape = ctx.constant(f"{path}.shape", np.array([0] * layer.start_dim + [-1], np.int64))
    return ctx.node("Reshape", [x, shape], path)


@register_onnx_exporter("Embedding")
def _embedding(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    return ctx.node("Gather", [ctx.constant(f"{path}.weight", _w(layer, "weight")), x], path,
                    axis=0)


@register_onnx_exporter("RBM")
def _rbm(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
    wt = ctx.constant(f"{path}.weight_t", _w(layer, "weight").T.copy())
    (y,) = ctx.node("MatMul", [x, wt], path)
    (y,) = ctx.node("Add", [y, ctx.constant(f"{path}.hidden_bias", _w(layer, "hidden_bias"))],
                    path)
    return ctx.node("Sigmoid", [y], path)


# PyTorch stacks gates as LSTM i,f,g,o and GRU r,z,n; ONNX wants LSTM i,o,f,c and GRU z,r,h.
_GATE_ORDER = {"RNN": [0], "LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2]}


def recurrent_op(ctx: Context, layer: Any, op: str, seq: str, path: str,
                 suffixes: list[str]) -> list[str]:
    """ONNX's RNN, LSTM or GRU op over `seq` (T, B, I) with a layer's weights named
    weight_ih{suffix}, ..., one suffix per direction (two: ONNX's bidirectional), their
    gate blocks in ONNX's order; returns the op's outputs."""
    order, h = _GATE_ORDER[op], layer.hidden_size

    def blocks(a: np.ndarray) -> np.ndarray:
        return np.concatenate([a[g * h:(g + 1) * h] for g in order])

    def stacked(name: str) -> np.ndarray:
        return np.stack([blocks(_w(layer, f"{name}{s}")) for s in suffixes])

    W, R = stacked("weight_ih"), stacked("weight_hh")
    if layer.bias:
        B = np.concatenate([stacked("bias_ih"), stacked("bias_hh")], axis=1)
    else:
        B = np.zeros((len(suffixes), 2 * len(order) * h), W.dtype)
    tag = suffixes[0]
    inputs = [seq, ctx.constant(f"{path}.W{tag}", W), ctx.constant(f"{path}.R{tag}", R),
              ctx.constant(f"{path}.B{tag}", B)]
    attrs: dict[str, Any] = {"hidden_size": h}
    if len(suffixes) == 2:
        attrs["direction"] = "bidirectional"
    if op == "RNN":
        attrs["activations"] = ["Tanh" if layer.nonlinearity == "tanh" else "Relu"
                                ] * len(suffixes)
    if op == "GRU":
        attrs["linear_before_reset"] = 1  # r * (W_hn h + b_hn), as PyTorch computes
    return ctx.node(op, inputs, f"{path}{tag}", n_outputs=3 if op == "LSTM" else 2, **attrs)


def _recurrent(op: str) -> Exporter:
    def export(ctx: Context, layer: Any, path: str, x: str) -> list[str]:
        if getattr(layer, "proj_size", 0):
            raise ExportError(f"{path or 'the model'} (LSTM): ONNX's LSTM has no projection; "
                              "export a model with proj_size=0")
        seq = x
        if layer.batch_first:  # ONNX runtimes implement the time-major layout (layout=0)
            (seq,) = ctx.node("Transpose", [seq], path, perm=[1, 0, 2])
        finals: list[list[str]] = []
        merge = ctx.constant(f"{path}.merge", np.array([0, 0, -1], np.int64))
        for k in range(layer.num_layers):
            outs = recurrent_op(ctx, layer, op, seq, path, layer._suffixes(k))
            # Y is (T, directions, B, H): the directions side by side, as PyTorch's output.
            (seq,) = ctx.node("Transpose", [outs[0]], path, perm=[0, 2, 1, 3])
            (seq,) = ctx.node("Reshape", [seq, merge], path)
            finals.append(outs[1:])  # each (directions, B, H)
        if layer.output == "last":
            idx = ctx.constant(f"{path}.last", np.array(-1, np.int64))
            return ctx.node("Gather", [seq, idx], path, axis=0)
        out = seq
        if layer.batch_first:
            (out,) = ctx.node("Transpose", [seq], path, perm=[1, 0, 2])
        if layer.output == "sequence":
            return [out]
        # "tuple": also the final states, stacked over layers as (num_layers * D, B, H)
        states = [ctx.node("Concat", [f[i] for f in finals], path, axis=0)[0]
                  for i in range(len(finals[0]))]
        return [out, *states]

    return export


for _op in ("RNN", "LSTM", "GRU"):
    register_onnx_exporter(_op)(_recurrent(_op))
