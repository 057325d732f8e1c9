"""Differentiable backward rules of arithmetic and the elementwise functions (those of
activations, layers and losses: derivatives_layers): each op's input gradients written
with lamina's own ops, which `backward(create_graph=True)` and
`autograd.grad(create_graph=True)` record so that a gradient can be differentiated again
(lamina.autograd.higher_order).

A rule reads the op's input tensors (`f.inputs`) and what forward kept of its shapes and
options, never the arrays forward saved: those are not in the graph. Values an op only
reads as constants (masks, ReLU's sign, max's ties) enter as constant tensors, whose
derivative is zero almost everywhere, as PyTorch has them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.higher_order import derivative
from lamina.autograd.tensor import Tensor
from lamina.functions import array
from lamina.functions import axis_reductions as red
from lamina.functions import math as m
from lamina.functions import product as mm
from lamina.functions import unary as un
from lamina.functions._util import broadcast_axes
from lamina.functions.elementwise import UNARY, Atan2, Fmod, Step, polygamma, unary
from lamina.functions.gamma import Polygamma
from lamina.functions.operands import cast


def constant(a: Any, like: Tensor) -> Tensor:
    """A constant tensor in like's dtype (a mask, a slope)."""
    return Tensor(np.asarray(a, like.dtype))


def summed_to(g: Tensor, meta: tuple[tuple[int, ...], Any]) -> Tensor:
    """A broadcast result's gradient summed back to an input's (shape, dtype)."""
    shape_, dtype = meta
    if tuple(g.shape) != tuple(shape_):
        lead, axes = broadcast_axes(tuple(g.shape), tuple(shape_))
        if axes:
            g = red.sum(g, axes, keepdims=True)
        if lead:
            g = array.reshape(g, shape_)
    return cast(g, dtype)


# -- arithmetic ----------------------------------------------------------------------------


def _binary(f: Any, ga: Any, gb: Any) -> tuple[Any, Any]:
    need_a, need_b = f.needs_input_grad
    return (summed_to(ga(), f.a_meta) if need_a else None,
            summed_to(gb(), f.b_meta) if need_b else None)


@derivative(m.Add)
def _add(f: Any, gy: Tensor) -> tuple[Any, ...]:
    return _binary(f, lambda: gy, lambda: gy)


@derivative(m.Sub)
def _sub(f: Any, gy: Tensor) -> tuple[Any, ...]:
    return _binary(f, lambda: gy, lambda: -gy)


@derivative(m.Mul)
def _mul(f: Any, gy: Tensor) -> tuple[Any, ...]:
    a, b = f.inputs
    return _binary(f, lambda: gy * b, lambda: gy * a)


@derivative(m.Div)
def _div(f: Any, gy: Tensor) -> tuple[Any, ...]:
    a, b = f.inputs
    return _binary(f, lambda: gy / b, lambda: -gy * a / (b * b))


@derivative(m.Pow)
def _pow(f: Any, gy: Tensor) -> tuple[Any, ...]:
    a, b = f.inputs

    def gb() -> Tensor:  # a^b log a, 0 where a == 0 (PyTorch's convention)
        positive = a.array > 0
        log_a = m.where(positive, un.log(m.where(positive, a, constant(1, a))), constant(0, a))
        return gy * m.pow(a, b) * log_a
    return _binary(f, lambda: gy * b * m.pow(a, b - 1), gb)


@derivative(m.PowScalar)
def _pow_scalar(f: Any, gy: Tensor) -> Tensor:
    (x,) = f.inputs
    c = f.c
    if c == 0:
        return gy * 0
    if c == 1:
        return gy
    return gy * (c * (x if c == 2 else m.PowScalar(c - 1).apply(x)))


@derivative(m.Maximum, m.Minimum)
def _pick(f: Any, gy: Tensor) -> tuple[Any, ...]:
    a, b = f.inputs
    share = np.where(a.array == b.array, 0.5, f.wins(a.array, b.array))
    return _binary(f, lambda: gy * constant(share, gy), lambda: gy * constant(1 - share, gy))


@derivative(m.Where)
def _where(f: Any, gy: Tensor) -> tuple[Any, ...]:
    cond = f.inputs[0]
    zero = constant(0, gy)
    _, need_a, need_b = f.needs_input_grad
    return (None, summed_to(m.where(cond, gy, zero), f.a_meta) if need_a else None,
            summed_to(m.where(cond, zero, gy), f.b_meta) if need_b else None)


@derivative(mm.MatMul)
def _matmul(f: Any, gy: Tensor) -> tuple[Any, Any]:
    a, b = f.inputs
    a2 = array.reshape(a, (1, *a.shape)) if a.ndim == 1 else a
    b2 = array.reshape(b, (*b.shape, 1)) if b.ndim == 1 else b
    g2 = gy
    if b.ndim == 1:
        g2 = array.reshape(g2, (*g2.shape, 1))
    if a.ndim == 1:
        g2 = array.reshape(g2, (*g2.shape[:-2], 1, g2.shape[-1]))
    need_a, need_b = f.needs_input_grad
    ga = gb = None
    if need_a:
        ga = array.reshape(summed_to(mm.matmul(g2, b2.transpose(-1, -2)), (a2.shape, a.dtype)),
                           a.shape)
    if need_b:
        gb = array.reshape(summed_to(mm.matmul(a2.transpose(-1, -2), g2), (b2.shape, b.dtype)),
                           b.shape)
    return ga, gb


@derivative(red.Sum)
def _sum(f: Any, gy: Tensor) -> Tensor:
    if not f.keepdims and f.axes:
        kept = list(f.x_shape)
        for a in f.axes:
            kept[a] = 1
        gy = array.reshape(gy, tuple(kept))
    return array.broadcast_to(gy, f.x_shape)


@derivative(red.Extremum)
def _extremum(f: Any, gy: Tensor) -> Tensor:
    (x,) = f.inputs
    y = (np.max if f.largest else np.min)(x.array, axis=f.axes, keepdims=True)
    hit = x.array == y
    share = hit / hit.sum(axis=f.axes, keepdims=True)
    if not f.keepdims:
        gy = array.reshape(gy, y.shape)
    return gy * constant(share, gy)


# -- elementwise functions -----------------------------------------------------------------


@derivative(un.Neg)
def _neg(f: Any, gy: Tensor) -> Tensor:
    return -gy


@derivative(un.Exp)
def _exp(f: Any, gy: Tensor) -> Tensor:
    return gy * un.exp(f.inputs[0])


@derivative(un.Log)
def _log(f: Any, gy: Tensor) -> Tensor:
    return gy / f.inputs[0]


@derivative(un.Sqrt)
def _sqrt(f: Any, gy: Tensor) -> Tensor:
    return gy / (2 * un.sqrt(f.inputs[0]))


@derivative(un.Abs)
def _abs(f: Any, gy: Tensor) -> Tensor:
    return gy * constant(np.sign(f.inputs[0].array), gy)


@derivative(un.Clip)
def _clip(f: Any, gy: Tensor) -> Tensor:
    x = f.inputs[0].array
    inside = np.ones(x.shape, bool)
    if f.lo is not None:
        inside &= x >= f.lo
    if f.hi is not None:
        inside &= x <= f.hi
    return gy * constant(inside, gy)


@derivative(Step)
def _step(f: Any, gy: Tensor) -> Tensor:
    return gy * 0


_LN2, _LN10, _SQRT_PI = math.log(2.0), math.log(10.0), math.sqrt(math.pi)
# d/dx of each op of elementwise.UNARY, as lamina ops on x (u: the table's ops by name)
_UNARY_RULES = {
    "expm1": lambda x, gy, u: gy * un.exp(x),
    "exp2": lambda x, gy, u: gy * u("exp2", x) * _LN2,
    "log1p": lambda x, gy, u: gy / (1 + x),
    "log2": lambda x, gy, u: gy / (x * _LN2),
    "log10": lambda x, gy, u: gy / (x * _LN10),
    "rsqrt": lambda x, gy, u: -0.5 * gy * m.PowScalar(-1.5).apply(x),
    "square": lambda x, gy, u: 2 * x * gy,
    "reciprocal": lambda x, gy, u: -gy / (x * x),
    "sin": lambda x, gy, u: gy * u("cos", x),
    "cos": lambda x, gy, u: -gy * u("sin", x),
    "tan": lambda x, gy, u: gy * (1 + m.PowScalar(2).apply(u("tan", x))),
    "asin": lambda x, gy, u: gy / un.sqrt(1 - x * x),
    "acos": lambda x, gy, u: -gy / un.sqrt(1 - x * x),
    "atan": lambda x, gy, u: gy / (1 + x * x),
    "sinh": lambda x, gy, u: gy * u("cosh", x),
    "cosh": lambda x, gy, u: gy * u("sinh", x),
    "asinh": lambda x, gy, u: gy / un.sqrt(x * x + 1),
    "atanh": lambda x, gy, u: gy / (1 - x * x),
    "erf": lambda x, gy, u: gy * (2 / _SQRT_PI) * un.exp(-(x * x)),
    "erfc": lambda x, gy, u: gy * (-2 / _SQRT_PI) * un.exp(-(x * x)),
    "erfcx": lambda x, gy, u: gy * (2 * x * u("erfcx", x) - 2 / _SQRT_PI),
    "log_ndtr": lambda x, gy, u: gy * math.sqrt(2 / math.pi) / u("erfcx", x * (-1 / math.sqrt(2))),
    "frac": lambda x, gy, u: gy,
    "erfinv": lambda x, gy, u: gy * (_SQRT_PI / 2) * un.exp(m.PowScalar(2).apply(u("erfinv", x))),
    "lgamma": lambda x, gy, u: gy * u("digamma", x),
    "digamma": lambda x, gy, u: gy * polygamma(1, x),
}


@derivative(Polygamma)
def _polygamma(f: Any, gy: Tensor) -> Tensor:
    return gy * polygamma(f.n + 1, f.inputs[0])


@derivative(Atan2)
def _atan2(f: Any, gy: Tensor) -> tuple[Any, Any]:
    a, b = f.inputs
    r2 = a * a + b * b
    return (summed_to(gy * b / r2, (a.shape, a.dtype)),
            summed_to(-gy * a / r2, (b.shape, b.dtype)))


@derivative(Fmod)
def _fmod(f: Any, gy: Tensor) -> tuple[Any, Any]:
    a, b = f.inputs
    need_a, need_b = f.needs_input_grad
    q = (np.floor if f.floor else np.trunc)(a.array / b.array)  # constant between jumps
    return (summed_to(gy, (a.shape, a.dtype)) if need_a else None,
            summed_to(-gy * constant(q, gy), (b.shape, b.dtype)) if need_b else None)


def _unary_rule(name: str) -> Any:
    rule = _UNARY_RULES[name]
    return lambda f, gy: cast(rule(f.inputs[0], gy, unary), gy.dtype)


for _name, _op in UNARY.items():
    derivative(_op)(_unary_rule(_name))
