"""`lamina.onnx.export`: trace the model's forward and write each traced op as ONNX nodes.

The model runs once at the example's sizes, and once more per dynamic axis with that axis
one longer; the traces must run the same ops. Comparing them tells which sizes follow a
dynamic axis (graph.infer_dims), so that reshapes and made-up tensors (zeros of the batch's
size) follow it at run time too.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.onnx.capture import ModuleCall, trace_model
from lamina.onnx.graph import Context, Dim, ExportError, Size, infer_dims
from lamina.onnx.registry import OP_EXPORTERS, module_exporter
from lamina.onnx.sources import sources
from lamina.plan.trace import Trace


@dataclass
class Call:
    """One traced op as its exporter sees it: the op (its attributes are its arguments),
    its inputs' graph names, sizes and dtypes, and its outputs' sizes and dtypes."""

    fn: Any
    inputs: list[str]
    in_dims: list[list[Dim | None]]
    in_dtypes: list[np.dtype]
    out_dims: list[list[Dim | None]]
    out_dtypes: list[np.dtype]
    constants: list[Any]  # an input's value where it is a constant or parameter, else None
    hint: str


def export(model: Layer, args: Any, f: str | os.PathLike | io.IOBase, *,
           kwargs: Mapping[str, Any] | None = None, input_names: Sequence[str] | None = None,
           output_names: Sequence[str] | None = None,
           dynamic_axes: Mapping[str, Any] | None = None, opset_version: int = 17,
           export_params: bool = True, verbose: bool = False) -> Path | None:
    """Write `model` as ONNX, traced on `args`, as `torch.onnx.export` does.

    Args:
        model: any Module, custom `forward` included; exported in eval mode.
        args: the example input: a tensor or a tuple of them (arrays are taken as tensors).
        f: a path or a binary file object.
        kwargs: keyword arguments of the example call.
        input_names, output_names: graph names (default: forward's parameter names, and
            "output" or "output_0", "output_1", ...).
        dynamic_axes: `{name: {axis: "symbol"}}` or `{name: [axes]}` for inputs and
            outputs; axes not listed keep the example's size.
        opset_version: ONNX opset, 14 to 21.
        export_params: must be True: the weights are stored in the file.
        verbose: print the graph.

    Returns:
        The path written, or None for a file object.

    Raises:
        ExportError: an op has no exporter (the error names it and the line of forward
            that called it), a size grows with a dynamic axis in no whole multiple, or the
            model runs other ops at another size.
    """
    onnx = _onnx()
    if not 14 <= opset_version <= 21:
        raise ExportError(f"onnx export: opset_version must be 14 to 21; got {opset_version}")
    if not export_params:
        raise ExportError("onnx export: export_params=False is not supported; the weights "
                          "are always stored in the file")
    inputs = [a if isinstance(a, Tensor) else Tensor(np.asarray(a))
              for a in (args if isinstance(args, (tuple, list)) else (args,))]
    kwargs = dict(kwargs or {})
    in_names = list(input_names or _parameter_names(model, len(inputs)))
    symbols = _input_symbols(in_names, dynamic_axes or {}, inputs)
    was_training = model.training
    model.eval()
    try:
        base, tracer = _trace(model, inputs, kwargs)
        grown = {s: _trace(model, [_grow(t, axes.get(i, [])) for i, t in enumerate(inputs)],
                           kwargs)[0] for s, axes in symbols.items()}
    finally:
        model.train(was_training)
    for s, trace in grown.items():
        _same_ops(base, trace, s)
    sizes = {s: (inputs[i].shape[ax[0]], inputs[i].shape[ax[0]] + 1)
             for s, axes in symbols.items() for i, ax in [next(iter(axes.items()))]}
    dims = [infer_dims(base.shapes[v], {s: t.shapes[v] for s, t in grown.items()}, sizes)
            for v in range(len(base.kinds))]
    ctx = Context(opset_version)
    names = sources(ctx, model, base, tracer.made_at, dims, in_names, symbols)
    for node, line in zip(base.nodes, tracer.lines):
        ctx.where = f"onnx export: {node.name}{line}"
        call = Call(node.fn, [names[v] for v in node.inputs], [dims[v] for v in node.inputs],
                    [base.dtypes[v] for v in node.inputs], [dims[v] for v in node.outputs],
                    [base.dtypes[v] for v in node.outputs],
                    [base.arrays[v] if base.kinds[v] in ("const", "param") else None
                     for v in node.inputs], node.name.lower())
        outs = _export_node(ctx, call)
        names.update(zip(node.outputs, outs))
    out_names = list(output_names or (["output"] if len(base.outputs) == 1 else
                                      [f"output_{i}" for i in range(len(base.outputs))]))
    if len(out_names) != len(base.outputs):
        raise ExportError(f"onnx export: {len(out_names)} output_names for a model that "
                          f"returns {len(base.outputs)} tensors")
    for v, name in zip(base.outputs, out_names):
        ctx.nodes.append(ctx.helper.make_node("Identity", [names[v]], [name], name=name))
    declared = {**{n: {} for n in out_names}, **_declared(dynamic_axes or {})}
    used = {name for node in ctx.nodes for name in node.input}  # a weight stored transposed
    graph = onnx.helper.make_graph(
        ctx.nodes, "lamina", [_info(n, dims[v], base.dtypes[v], declared.get(n, {}))
                              for n, v in zip(in_names, base.inputs)],
        [_info(n, dims[v], base.dtypes[v], declared.get(n, {}))
         for n, v in zip(out_names, base.outputs)],
        [t for t in ctx.initializers if t.name in used])
    opsets = [onnx.helper.make_opsetid("", opset_version)]
    proto = onnx.helper.make_model(graph, opset_imports=opsets, producer_name="lamina")
    # The lowest IR version the opset allows, so older runtimes load the file too.
    proto.ir_version = onnx.helper.find_min_ir_version_for(opsets)
    onnx.checker.check_model(proto, full_check=True)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    data = proto.SerializeToString()
    if isinstance(f, io.IOBase):
        f.write(data)
        return None
    from lamina.io.checkpoint import atomic_write

    return atomic_write(f, data)


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("ONNX export needs the onnx package: pip install 'lamina[onnx]'") from e
    return onnx


def _parameter_names(model: Layer, n: int) -> list[str]:
    with contextlib.suppress(TypeError, ValueError):
        params = [p for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) >= n:
            return [p.name for p in params[:n]]
    return ["input"] if n == 1 else [f"input_{i}" for i in range(n)]


def _declared(dynamic_axes: Mapping[str, Any]) -> dict[str, dict[int, str]]:
    """dynamic_axes as {name: {axis: symbol}} (a list of axes gets PyTorch's symbol names)."""
    out = {}
    for name, axes in dynamic_axes.items():
        if isinstance(axes, Mapping):
            out[name] = {int(a): str(s) for a, s in axes.items()}
        else:
            out[name] = {int(a): f"{name}_dynamic_axes_{k + 1}" for k, a in enumerate(axes)}
    return out


def _input_symbols(names: list[str], dynamic_axes: Mapping[str, Any], inputs: list[Tensor]
                   ) -> dict[str, dict[int, list[int]]]:
    """symbol -> {input index: [its axes]} for the inputs' dynamic axes."""
    out: dict[str, dict[int, list[int]]] = {}
    for name, axes in _declared(dynamic_axes).items():
        if name not in names:
            continue
        i = names.index(name)
        for axis, symbol in axes.items():
            if not -inputs[i].ndim <= axis < inputs[i].ndim:
                raise ExportError(f"onnx export: dynamic_axes names axis {axis} of input "
                                  f"'{name}', which has shape {inputs[i].shape}")
            out.setdefault(symbol, {}).setdefault(i, []).append(axis % inputs[i].ndim)
    return out


def _grow(t: Tensor, axes: list[int]) -> Tensor:
    a = t.array
    for axis in axes:
        a = np.concatenate([a, a.take([0], axis=axis)], axis=axis)
    return Tensor(a)


def _trace(model: Layer, inputs: list[Tensor], kwargs: dict[str, Any]) -> Any:
    """A trace of the model from zero recurrent state (carried states are put back)."""
    stateful = [layer for _, layer in model.named_modules() if hasattr(layer, "reset_state")]
    saved = [layer.state for layer in stateful]
    for layer in stateful:
        layer.reset_state()
    try:
        return trace_model(model, inputs, kwargs, lambda layer: module_exporter(layer) is not None)
    finally:
        for layer, kept in zip(stateful, saved):
            layer.state = kept


def _same_ops(base: Trace, other: Trace, symbol: str) -> None:
    a, b = base.signature(), other.signature()
    if len(a) != len(b):
        raise ExportError(f"onnx export: the model runs {len(a)} ops at the example's size and "
                          f"{len(b)} when '{symbol}' grows (a Python loop over a dynamic axis?); "
                          "a graph holds one sequence of ops. Export with fixed sizes")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            raise ExportError(f"onnx export: op {i} differs when '{symbol}' grows ({x[0]} at the "
                              f"example's size, {y[0]} one longer, or other inputs); a graph "
                              "holds one sequence of ops. Export with fixed sizes")


def _export_node(ctx: Context, call: Call) -> list[str]:
    if isinstance(call.fn, ModuleCall):
        layer = call.fn.layer
        if call.fn.n_args != 1 or call.fn.kwargs:
            raise ctx.fail(f"{type(layer).__name__} is exported whole from one input; this call "
                           f"passes {call.fn.n_args} tensors and keywords "
                           f"{sorted(call.fn.kwargs)} (call it with its input alone)")
        return module_exporter(layer)(ctx, layer, call.fn.path, call.inputs[0])
    exporter = OP_EXPORTERS.get(type(call.fn).__name__)
    if exporter is None:
        raise ctx.fail(f"no ONNX exporter for the op {call.fn.name}; register one with "
                       "lamina.onnx.register_op_exporter, or compute it with ops that have one")
    return exporter(ctx, call)


def _info(name: str, dims: list[Dim | None], dtype: Any, declared: dict[int, str]) -> Any:
    from onnx import helper

    shape: list[Any] = []
    for axis, d in enumerate(dims):
        if axis in declared:
            shape.append(declared[axis])
        elif isinstance(d, Size):
            shape.append(str(d))
        else:
            shape.append(d)
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                         shape)

