"""Op exporters of arithmetic: elementwise math, comparisons, casts, reductions, matmul.

ONNX does not promote dtypes: where an op's inputs differ from the dtype lamina computed
in (a Python scalar, an integer mask times a float), they are cast to it first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.sorting import ArgIndex
from lamina.onnx.export import Call
from lamina.onnx.graph import Context
from lamina.onnx.registry import register_op_exporter


def typed_inputs(ctx: Context, call: Call, dtype: Any) -> list[str]:
    return [ctx.cast(n, d, dtype, call.hint) for n, d in zip(call.inputs, call.in_dtypes)]


def scalar(ctx: Context, call: Call, value: float, dtype: Any = None) -> str:
    return ctx.constant(call.hint, np.array(value, dtype or call.out_dtypes[0]))


def _elementwise(onnx_op: str) -> Any:
    def export(ctx: Context, call: Call) -> list[str]:
        return ctx.node(onnx_op, typed_inputs(ctx, call, call.out_dtypes[0]), call.hint)
    return export


for _op, _onnx_op in [("Add", "Add"), ("Sub", "Sub"), ("Mul", "Mul"), ("Div", "Div"),
                      ("Pow", "Pow"), ("Maximum", "Max"), ("Minimum", "Min"),
                      ("MatMul", "MatMul"), ("Neg", "Neg"), ("Exp", "Exp"), ("Log", "Log"),
                      ("Sqrt", "Sqrt"), ("Abs", "Abs"), ("Reciprocal", "Reciprocal"),
                      ("Sin", "Sin"), ("Cos", "Cos"), ("Tan", "Tan"), ("Asin", "Asin"),
                      ("Acos", "Acos"), ("Atan", "Atan"), ("Sinh", "Sinh"), ("Cosh", "Cosh"),
                      ("Asinh", "Asinh"), ("Atanh", "Atanh"), ("Erf", "Erf")]:
    register_op_exporter(_op)(_elementwise(_onnx_op))


@register_op_exporter("Rsqrt")
def _rsqrt(ctx: Context, call: Call) -> list[str]:
    root = ctx.node("Sqrt", typed_inputs(ctx, call, call.out_dtypes[0]), call.hint)[0]
    return ctx.node("Reciprocal", [root], call.hint)


@register_op_exporter("PowScalar")
def _pow_scalar(ctx: Context, call: Call) -> list[str]:
    return ctx.node("Pow", [call.inputs[0], scalar(ctx, call, call.fn.c)], call.hint)


@register_op_exporter("Clip")
def _clip(ctx: Context, call: Call) -> list[str]:
    bounds = ["" if b is None else scalar(ctx, call, b) for b in (call.fn.lo, call.fn.hi)]
    return ctx.node("Clip", [call.inputs[0], *bounds], call.hint)


@register_op_exporter("AsType")
def _astype(ctx: Context, call: Call) -> list[str]:
    return [ctx.cast(call.inputs[0], call.in_dtypes[0], call.out_dtypes[0], call.hint)]


@register_op_exporter("Where")
def _where(ctx: Context, call: Call) -> list[str]:
    cond, a, b = call.inputs
    cond = ctx.cast(cond, call.in_dtypes[0], bool, call.hint)
    a, b = (ctx.cast(n, d, call.out_dtypes[0], call.hint)
            for n, d in zip((a, b), call.in_dtypes[1:]))
    return ctx.node("Where", [cond, a, b], call.hint)


# NumPy's functions behind lamina's comparisons and rounding -> ONNX ops
_COMPARE = {np.less: "Less", np.greater: "Greater", np.less_equal: "LessOrEqual",
            np.greater_equal: "GreaterOrEqual", np.equal: "Equal", np.logical_and: "And",
            np.logical_or: "Or", np.logical_xor: "Xor", np.logical_not: "Not",
            np.floor: "Floor", np.ceil: "Ceil", np.isnan: "IsNaN", np.sign: "Sign",
            np.round: "Round", np.rint: "Round", np.isinf: "IsInf"}


@register_op_exporter("Compare")
def _compare(ctx: Context, call: Call) -> list[str]:
    op = call.fn.op
    if isinstance(op, ArgIndex):
        return _arg_index(ctx, call, op)
    if op is np.not_equal:
        return ctx.node("Not", _compare_as(ctx, call, "Equal"), call.hint)
    onnx_op = _COMPARE.get(op)
    if onnx_op is None:
        raise ctx.fail(f"no ONNX op for {getattr(op, '__name__', op)!r}")
    return _compare_as(ctx, call, onnx_op)


@register_op_exporter("Step")
def _step(ctx: Context, call: Call) -> list[str]:
    """floor, ceil, sign, round (half to even, as ONNX's Round) and trunc, the
    piecewise-constant ops; trunc as sign * floor(|x|), which ONNX has no op for."""
    op, x = call.fn.op, call.inputs[0]
    if op is np.trunc:
        return _trunc(ctx, x, call.hint)
    onnx_op = _COMPARE.get(op) if op in (np.floor, np.ceil, np.sign, np.round) else None
    if onnx_op is None:  # round to decimals: a lambda over np.round
        raise ctx.fail("no ONNX op for rounding to decimals; round() without them exports")
    return ctx.node(onnx_op, [x], call.hint)


def _trunc(ctx: Context, x: str, hint: str) -> list[str]:
    magnitude = ctx.node("Floor", ctx.node("Abs", [x], hint), hint)[0]
    return ctx.node("Mul", [ctx.node("Sign", [x], hint)[0], magnitude], hint)


@register_op_exporter("RoundedQuotient")
def _rounded_quotient(ctx: Context, call: Call) -> list[str]:
    """A float division rounded down (floor) or toward zero (trunc)."""
    (q,) = ctx.node("Div", typed_inputs(ctx, call, call.out_dtypes[0]), call.hint)
    return ctx.node("Floor", [q], call.hint) if call.fn.mode == "floor" else _trunc(
        ctx, q, call.hint)


def _compare_as(ctx: Context, call: Call, onnx_op: str) -> list[str]:
    logical = onnx_op in ("And", "Or", "Xor", "Not")
    common = bool if logical else np.result_type(*call.in_dtypes)
    return ctx.node(onnx_op, typed_inputs(ctx, call, common), call.hint)


def reduce(ctx: Context, call: Call, onnx_op: str, axes: tuple[int, ...], keepdims: bool
           ) -> list[str]:
    """A reduction over `axes` (every axis where empty is not meant: pass them all)."""
    x = call.inputs[0]
    if onnx_op == "ReduceSum" or ctx.opset >= 18:  # axes became an input in these opsets
        return ctx.node(onnx_op, [x, ctx.ints(call.hint, axes)], call.hint,
                        keepdims=int(keepdims))
    return ctx.node(onnx_op, [x], call.hint, axes=list(axes), keepdims=int(keepdims))


@register_op_exporter("Sum")
def _sum(ctx: Context, call: Call) -> list[str]:
    return reduce(ctx, call, "ReduceSum", call.fn.axes, call.fn.keepdims)


@register_op_exporter("Extremum")
def _extremum(ctx: Context, call: Call) -> list[str]:
    return reduce(ctx, call, "ReduceMax" if call.fn.largest else "ReduceMin", call.fn.axes,
                  call.fn.keepdims)


@register_op_exporter("WindowMax")
def _window_max(ctx: Context, call: Call) -> list[str]:
    """Composed max pooling's maximum over its stacked windows (axis 2); which element
    takes the gradient is backward's concern, not the graph's."""
    return reduce(ctx, call, "ReduceMax", (2,), False)


def _arg_index(ctx: Context, call: Call, op: ArgIndex) -> list[str]:
    x, axis = call.inputs[0], op.axis
    if not call.in_dims[0]:
        return [ctx.constant(call.hint, np.array(0, np.int64))]
    if axis is None:
        (x,) = ctx.node("Reshape", [x, ctx.ints(call.hint, [-1])], call.hint)
        axis = 0
    return ctx.node("ArgMax" if op.largest else "ArgMin", [x], call.hint, axis=axis,
                    keepdims=int(op.keepdims and op.axis is not None))
