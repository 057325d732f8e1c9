"""The sources of the graph: its inputs, the parameters (as initializers) and the tensors
the forward made (constants). A constant whose size follows a dynamic axis is made at run
time instead: a filled tensor by ConstantOfShape, a progression (arange) by Range, a
triangle (a causal mask) by Trilu."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.nn.layer import Layer
from lamina.onnx.graph import Context, Dim
from lamina.plan.trace import Trace


def sources(ctx: Context, model: Layer, trace: Trace, made_at: dict[int, str],
             dims: list[list[Dim | None]], in_names: list[str],
             symbols: dict[str, dict[int, list[int]]]) -> dict[int, str]:
    """Graph names of the inputs, parameters (as initializers) and constants."""
    names: dict[int, str] = dict(zip(trace.inputs, in_names))
    ctx.names.update(in_names)  # before any node is named
    for symbol, axes in symbols.items():
        i, ax = next(iter(axes.items()))
        (shape,) = ctx.node("Shape", [in_names[i]], symbol)
        ctx.symbol_at[symbol] = ctx.node("Slice", [shape, ctx.ints(symbol, [ax[0]]),
                                                   ctx.ints(symbol, [ax[0] + 1])], symbol)[0]
    by_id = {id(t): n for n, t in [*model.named_parameters(), *model.named_buffers()]}
    for v, kind in enumerate(trace.kinds):
        if kind == "param":
            names[v] = ctx.constant(by_id.get(id(trace.tensors[v]), "param"), trace.arrays[v])
        elif kind == "const":
            names[v] = _constant(ctx, trace.arrays[v], dims[v], made_at.get(v, ""))
    return names


def _constant(ctx: Context, a: np.ndarray, dims: list[Dim | None], where: str) -> str:
    """A constant made in forward; where its size follows a dynamic axis, it is made at run
    time: a filled tensor by ConstantOfShape, a 1-D progression by Range."""
    if all(isinstance(d, int) for d in dims):
        return ctx.constant("const", a)
    flat = a.reshape(-1)
    ctx.where = f"onnx export: a tensor made{where}"
    if flat.size and (flat == flat[0]).all():
        value = ctx.numpy_helper.from_array(flat[:1].copy())
        return ctx.node("ConstantOfShape", [ctx.shape_tensor(dims, "const")], "const",
                        value=value)[0]
    step = flat[1] - flat[0] if flat.size > 1 else 1
    if a.ndim == 1 and np.array_equal(flat, flat[0] + step * np.arange(flat.size)):
        n = ctx.cast(ctx.shape_tensor(dims, "range"), np.int64, a.dtype, "range")
        start, delta = (ctx.constant("range", np.array(v, a.dtype)) for v in (flat[0], step))
        (n,) = ctx.node("Squeeze", [n], "range")
        (stop,) = ctx.node("Add", [start, ctx.node("Mul", [n, delta], "range")[0]], "range")
        return ctx.node("Range", [start, stop, delta], "range")[0]
    k = _triangle(a)
    if k is not None:  # a causal mask: one value on and below a diagonal, another above
        return triangle(ctx, dims, k, a[0, -1], a[-1, 0])
    raise ctx.fail(f"its shape {a.shape} follows a dynamic axis but its values are neither one "
                   "value, a progression nor a triangle; make it from the input "
                   "(torch.zeros_like, x.new_ones) or export with fixed sizes")


def triangle(ctx: Context, dims: list[Dim | None], k: int, above: Any, below: Any) -> str:
    """A 2-D tensor of size `dims`, made at run time: `above` from diagonal k up, `below`
    under it (both NumPy scalars of its dtype)."""
    shape = ctx.shape_tensor(dims, "triangle")
    ones = ctx.numpy_helper.from_array(np.ones(1, np.int64))
    (upper,) = ctx.node("ConstantOfShape", [shape], "triangle", value=ones)
    (upper,) = ctx.node("Trilu", [upper, ctx.constant("triangle", np.array(k, np.int64))],
                        "triangle", upper=1)
    upper = ctx.cast(upper, np.int64, bool, "triangle")
    above, below = (ctx.constant("triangle", np.array(v)) for v in (above, below))
    return ctx.node("Where", [upper, above, below], "triangle")[0]


def _triangle(a: np.ndarray) -> int | None:
    """k where a holds one value from diagonal k up and another below it (a 2-D array)."""
    if a.ndim != 2 or not a.size:
        return None
    first = np.flatnonzero(a[0] != a[0, 0])
    k = int(first[0]) if first.size else a.shape[1]
    upper = np.triu(np.ones(a.shape, bool), k)
    return k if np.array_equal(a, np.where(upper, a[0, -1], a[-1, 0])) else None
