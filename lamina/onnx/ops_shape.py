"""Op exporters of shape and indexing: reshape, transpose, broadcast, slicing and integer
indexing, concatenation, stacking, splitting, padding and triangles."""

from __future__ import annotations

import numpy as np

from lamina.onnx.export import Call
from lamina.onnx.graph import Context
from lamina.onnx.registry import register_op_exporter

_END = np.iinfo(np.int64).max


@register_op_exporter("Reshape")
def _reshape(ctx: Context, call: Call) -> list[str]:
    return ctx.node("Reshape", [call.inputs[0], ctx.shape_tensor(call.out_dims[0], call.hint)],
                    call.hint)


@register_op_exporter("BroadcastTo")
def _broadcast(ctx: Context, call: Call) -> list[str]:
    return ctx.node("Expand", [call.inputs[0], ctx.shape_tensor(call.out_dims[0], call.hint)],
                    call.hint)


@register_op_exporter("Transpose")
def _transpose(ctx: Context, call: Call) -> list[str]:
    axes = call.fn.axes or tuple(reversed(range(len(call.in_dims[0]))))
    return ctx.node("Transpose", [call.inputs[0]], call.hint, perm=[int(a) for a in axes])


@register_op_exporter("Concat")
def _concat(ctx: Context, call: Call) -> list[str]:
    return ctx.node("Concat", call.inputs, call.hint, axis=int(call.fn.axis))


@register_op_exporter("Stack")
def _stack(ctx: Context, call: Call) -> list[str]:
    axis = ctx.ints(call.hint, [call.fn.axis])
    parts = [ctx.node("Unsqueeze", [x, axis], call.hint)[0] for x in call.inputs]
    return ctx.node("Concat", parts, call.hint, axis=int(call.fn.axis))


def _fixed_axis(ctx: Context, call: Call) -> tuple[int, int]:
    """The op's axis and its size, which must not be dynamic (Split takes fixed sizes)."""
    axis = call.fn.axis % len(call.in_dims[0])
    n = call.in_dims[0][axis]
    if not isinstance(n, int):
        raise ctx.fail(f"splits axis {axis}, which is dynamic; split a fixed-size axis")
    return axis, n


def _split(ctx: Context, call: Call, sizes: list[int], axis: int) -> list[str]:
    return ctx.node("Split", [call.inputs[0], ctx.ints(call.hint, sizes)], call.hint,
                    n_outputs=len(sizes), axis=axis)


@register_op_exporter("Split")
def _split_op(ctx: Context, call: Call) -> list[str]:
    axis, n = _fixed_axis(ctx, call)
    edges = [0, *[int(b) for b in call.fn.bounds], n]
    return _split(ctx, call, [b - a for a, b in zip(edges, edges[1:])], axis)


@register_op_exporter("Unbind")
def _unbind(ctx: Context, call: Call) -> list[str]:
    axis, n = _fixed_axis(ctx, call)
    parts = _split(ctx, call, [1] * n, axis)
    return [ctx.node("Squeeze", [p, ctx.ints(call.hint, [axis])], call.hint)[0] for p in parts]


@register_op_exporter("Pad")
def _pad(ctx: Context, call: Call) -> list[str]:
    widths = [[int(lo), int(hi)] for lo, hi in call.fn.widths]
    pads = [lo for lo, _ in widths] + [hi for _, hi in widths]
    value = np.array(call.fn.value, call.in_dtypes[0])
    return ctx.node("Pad", [call.inputs[0], ctx.ints(call.hint, pads),
                            ctx.constant(call.hint, value)], call.hint, mode="constant")


@register_op_exporter("Triangle")
def _triangle(ctx: Context, call: Call) -> list[str]:
    k = ctx.constant(call.hint, np.array(call.fn.k, np.int64))
    return ctx.node("Trilu", [call.inputs[0], k], call.hint, upper=int(not call.fn.lower))


_SLOT = object()  # where a tensor index goes in a GetItem's key


@register_op_exporter("GetItem")
def _getitem(ctx: Context, call: Call) -> list[str]:
    """Basic indexing (ints, slices, None, ...) as Gather, Slice and Unsqueeze; one integer
    array (or tensor) as Gather on its axis."""
    fn = call.fn
    if fn.slots and not fn.is_tuple:
        parts = [_SLOT]
    else:
        parts = list(fn.template) if isinstance(fn.template, tuple) else [fn.template]
        parts = [_SLOT if i in fn.slots else k for i, k in enumerate(parts)]
    arrays = [k for k in parts if k is _SLOT or isinstance(k, (np.ndarray, list))]
    if len(arrays) > 1:
        raise ctx.fail("indexes with more than one integer array; index one axis at a time")
    consumed = sum(1 for k in parts if k is not None and k is not Ellipsis)
    x, axis, tensors = call.inputs[0], 0, iter(range(1, len(call.inputs)))
    for k in parts:
        if k is _SLOT or isinstance(k, (np.ndarray, list)):
            if k is _SLOT:
                i = next(tensors)
                index, ndim, dtype = call.inputs[i], len(call.in_dims[i]), call.in_dtypes[i]
            else:
                a = np.asarray(k)
                index, ndim, dtype = ctx.constant(call.hint, a), a.ndim, a.dtype
            if np.dtype(dtype) == bool:
                raise ctx.fail("indexes with a boolean mask, whose result's shape depends "
                               "on its values; multiply by the mask instead")
            x = ctx.node("Gather", [x, index], call.hint, axis=axis)[0]
            axis += ndim
        elif k is Ellipsis:
            axis += len(call.in_dims[0]) - consumed
        elif k is None:
            x = ctx.node("Unsqueeze", [x, ctx.ints(call.hint, [axis])], call.hint)[0]
            axis += 1
        elif isinstance(k, (int, np.integer)):
            x = ctx.node("Gather", [x, ctx.constant(call.hint, np.array(int(k), np.int64))],
                         call.hint, axis=axis)[0]
        else:
            if k != slice(None):
                x = _slice(ctx, call, x, k, axis)
            axis += 1
    return ctx.node("Identity", [x], call.hint)


def _slice(ctx: Context, call: Call, x: str, k: slice, axis: int) -> str:
    step = 1 if k.step is None else int(k.step)
    start = (0 if step > 0 else -1) if k.start is None else int(k.start)
    stop = (_END if step > 0 else -_END) if k.stop is None else int(k.stop)
    return ctx.node("Slice", [x, ctx.ints(call.hint, [start]), ctx.ints(call.hint, [stop]),
                              ctx.ints(call.hint, [axis]), ctx.ints(call.hint, [step])],
                    call.hint)[0]


@register_op_exporter("Gather")
def _gather_along(ctx: Context, call: Call) -> list[str]:
    return ctx.node("GatherElements", call.inputs, call.hint, axis=int(call.fn.axis))


@register_op_exporter("IndexSelect")
def _index_select(ctx: Context, call: Call) -> list[str]:
    return ctx.node("Gather", call.inputs, call.hint, axis=int(call.fn.axis))
