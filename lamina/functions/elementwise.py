"""Elementwise math beyond the operators: PyTorch's unary functions (sin, log1p, rsqrt,
erf, ...), fmod / remainder / atan2 / lerp, rounding, and the ops with no gradient
(logical and bitwise ops, isnan, isclose, ...).

Each unary op is one line of the table below: its forward on arrays and its derivative,
side by side. `keep` says what backward needs: the input "x" or the output "y".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions import error_functions as ef
from lamina.functions.activation_gelu import erf_into
from lamina.functions.gamma import Polygamma, digamma_array, lgamma_array, polygamma_array
from lamina.functions.math import _to_input, maximum, minimum, where
from lamina.functions.operands import cast, constant_op, floating, operands
from lamina.functions.unary import clip

_LN2, _LN10 = math.log(2.0), math.log(10.0)


class Unary(Function):
    """One elementwise function with its derivative `grad(x or y, gy)`. A `quiet` one has
    a domain edge (log's 0, atanh's 1) where it gives inf or NaN without NumPy's warning,
    as PyTorch gives them."""

    f: Callable[[Any], Any]
    grad: Callable[[Any, Any], Any]
    keep = "x"
    quiet = False

    def forward(self, x: Any) -> Any:
        if self.quiet:
            with np.errstate(divide="ignore", invalid="ignore"):
                y = self.f(x)
        else:
            y = self.f(x)
        if self.needs_input_grad[0]:
            self.save_for_backward(x if self.keep == "x" else y)
        return y

    def backward(self, gy: Any) -> Any:
        (v,) = self.saved_tensors
        if not self.quiet:
            return self.grad(v, gy).astype(gy.dtype, copy=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.grad(v, gy).astype(gy.dtype, copy=False)


def _erf(x: Any) -> Any:
    out = np.empty(x.shape, np.float64)
    erf_into(x, out)
    return out.astype(x.dtype, copy=False)


def erfinv_array(y: np.ndarray) -> np.ndarray:
    """The inverse error function by Newton's method (SciPy is not a dependency of
    lamina's core): from a rough start, a few steps in float64 reach its accuracy; +-inf
    at +-1 and NaN past them, as PyTorch's."""
    y64 = np.asarray(y, np.float64)
    inside = np.abs(y64) < 1
    v = np.where(inside, y64, 0.0)
    w = -np.log((1.0 - v) * (1.0 + v))
    x = np.where(w < 5, 0.886 * v, np.sign(v) * np.sqrt(np.maximum(w - 2.5, 0)))
    for _ in range(50):
        step = (_erf(x) - v) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
        x = x - step
        if np.abs(step).max(initial=0) < 1e-12:
            break
    edge = np.where(y64 == 1, np.inf, np.where(y64 == -1, -np.inf, np.nan))
    return np.where(inside, x, edge).astype(np.result_type(y, np.float32), copy=False)


# Analytic functions whose derivative formulas below hold for complex operands too
# (lamina/autograd/complex_rules.py); the special functions' kernels are real only.
_HOLOMORPHIC = {"Expm1", "Exp2", "Log1p", "Log2", "Log10", "Rsqrt", "Square", "Reciprocal",
                "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Atanh"}


def _unary(name: str, f: Callable[[Any], Any], grad: Callable[[Any, Any], Any],
           keep: str = "x", quiet: bool = False) -> type[Unary]:
    return type(name, (Unary,), {"f": staticmethod(f), "grad": staticmethod(grad),
                                 "keep": keep, "quiet": quiet,
                                 "complex_rule": "holomorphic" if name in _HOLOMORPHIC else None})


UNARY: dict[str, type[Unary]] = {op.__name__.lower(): op for op in [
    _unary("Expm1", np.expm1, lambda y, gy: gy * (y + 1), keep="y"),
    _unary("Exp2", np.exp2, lambda y, gy: gy * y * _LN2, keep="y"),
    _unary("Log1p", np.log1p, lambda x, gy: gy / (1 + x), quiet=True),
    _unary("Log2", np.log2, lambda x, gy: gy / (x * _LN2), quiet=True),
    _unary("Log10", np.log10, lambda x, gy: gy / (x * _LN10), quiet=True),
    _unary("Rsqrt", lambda x: 1 / np.sqrt(x), lambda y, gy: -0.5 * gy * y * y * y, keep="y",
           quiet=True),
    _unary("Square", np.square, lambda x, gy: 2 * x * gy),
    _unary("Reciprocal", lambda x: 1 / x, lambda y, gy: -gy * y * y, keep="y", quiet=True),
    _unary("Sin", np.sin, lambda x, gy: gy * np.cos(x)),
    _unary("Cos", np.cos, lambda x, gy: -gy * np.sin(x)),
    _unary("Tan", np.tan, lambda y, gy: gy * (1 + y * y), keep="y"),
    _unary("Asin", np.arcsin, lambda x, gy: gy / np.sqrt(1 - x * x), quiet=True),
    _unary("Acos", np.arccos, lambda x, gy: -gy / np.sqrt(1 - x * x), quiet=True),
    _unary("Atan", np.arctan, lambda x, gy: gy / (1 + x * x)),
    _unary("Sinh", np.sinh, lambda x, gy: gy * np.cosh(x)),
    _unary("Cosh", np.cosh, lambda x, gy: gy * np.sinh(x)),
    _unary("Asinh", np.arcsinh, lambda x, gy: gy / np.sqrt(x * x + 1)),
    _unary("Atanh", np.arctanh, lambda x, gy: gy / (1 - x * x), quiet=True),
    _unary("Erf", _erf, lambda x, gy: gy * (2 / math.sqrt(math.pi)) * np.exp(-x * x)),
    _unary("Erfc", ef.erfc_array, lambda x, gy: gy * (-2 / math.sqrt(math.pi)) * np.exp(-x * x)),
    _unary("Erfcx", ef.erfcx_array, lambda x, gy: gy * (2 * x * ef.erfcx_array(x)
                                                      - 2 / math.sqrt(math.pi)), quiet=True),
    _unary("Log_ndtr", ef.log_ndtr_array, lambda x, gy: gy * ef.log_ndtr_grad(x), quiet=True),
    _unary("Frac", lambda x: x - np.trunc(x), lambda x, gy: gy),
    _unary("Erfinv", erfinv_array,
           lambda y, gy: gy * (math.sqrt(math.pi) / 2) * np.exp(y * y), keep="y"),
    _unary("Lgamma", lgamma_array, lambda x, gy: gy * digamma_array(x), quiet=True),
    _unary("Digamma", digamma_array, lambda x, gy: gy * polygamma_array(1, x), quiet=True),
]}


def unary(name: str, x: Tensor) -> Tensor:
    """Apply the table's op `name` (float results; integers are promoted first, but for
    square, which keeps them integers, as PyTorch's does)."""
    if name == "square" and x.array.dtype.kind in "iu":
        return constant_op(np.square, x)
    return UNARY[name]().apply(floating(x))


def polygamma(n: int, x: Tensor) -> Tensor:
    """The n-th derivative of digamma (integers are promoted first)."""
    return Polygamma(n).apply(floating(x))


# Rounding and sign have zero gradient almost everywhere; PyTorch gives exactly zero.
_STEP = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc, "sign": np.sign}


class Step(Function):
    """A piecewise-constant function: values from `op`, a zero gradient."""

    def __init__(self, op: Callable[[Any], Any]) -> None:
        self.op = op

    def forward(self, x: Any) -> Any:
        return self.op(x)

    def backward(self, gy: Any) -> Any:
        return np.zeros_like(gy)


def step(name: str, x: Tensor) -> Tensor:
    """floor, ceil, trunc, sign: integers come back unchanged (sign: -1, 0, 1)."""
    if x.array.dtype.kind in "iub" and name != "sign":
        return x.clone()
    return Step(_STEP[name]).apply(x)


def round(x: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    """Round half to even (as PyTorch and NumPy do), to `decimals` places; zero gradient."""
    if x.array.dtype.kind in "iub":
        return x.clone()
    return Step(np.round if decimals == 0 else lambda a: np.round(a, decimals)).apply(x)


class Fmod(Function):
    """a - trunc(a / b) * b (C's fmod: the sign of a) or, with `floor`, Python's % (the
    sign of b); d/da = 1, d/db = -trunc or -floor of a / b."""

    def __init__(self, floor: bool) -> None:
        self.floor = floor

    def forward(self, a: Any, b: Any) -> Any:
        self.save_for_backward(a, b)
        return np.remainder(a, b) if self.floor else np.fmod(a, b)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        a, b = self.saved_tensors
        need_a, need_b = self.needs_input_grad
        ga = _to_input(gy, (a.shape, a.dtype)) if need_a else None
        gb = None
        if need_b:
            q = (np.floor if self.floor else np.trunc)(a / b)
            gb = _to_input(-gy * q, (b.shape, b.dtype))
        return ga, gb


def fmod(a: Any, b: Any) -> Tensor:
    """The remainder of a / b with the sign of a (C's fmod)."""
    return _integer_safe(Fmod(False), np.fmod, a, b)


def remainder(a: Any, b: Any) -> Tensor:
    """The remainder of a / b with the sign of b (Python's %)."""
    return _integer_safe(Fmod(True), np.remainder, a, b)


def _integer_safe(op: Function, array_op: Any, a: Any, b: Any) -> Tensor:
    a, b = operands(a, b)
    if a.array.dtype.kind in "iub":
        return constant_op(array_op, a, b)
    return op.apply(a, b)


class Atan2(Function):
    def forward(self, a: Any, b: Any) -> Any:
        self.save_for_backward(a, b)
        return np.arctan2(a, b)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        a, b = self.saved_tensors
        r2 = a * a + b * b
        return (_to_input(gy * b / r2, (a.shape, a.dtype)),
                _to_input(-gy * a / r2, (b.shape, b.dtype)))


def atan2(a: Any, b: Any) -> Tensor:
    """The angle of the point (b, a), elementwise (floats of the default dtype for two
    integer operands, as in PyTorch)."""
    a, b = operands(a, b)
    return Atan2().apply(floating(a), floating(b))


def lerp(start: Tensor, end: Any, weight: Any) -> Tensor:
    """start + weight * (end - start)."""
    return start + weight * (end - start)


def clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    """x limited to [min, max] (numbers or tensors); the gradient passes where
    min <= x <= max. Also `clip`.

    Examples:
        >>> lm.tensor([-2.0, 0.5, 3.0]).clamp(min=0, max=1)
        tensor([0. , 0.5, 1. ])
    """
    if min is None and max is None:
        raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None")
    if not isinstance(min, Tensor) and not isinstance(max, Tensor):
        if x.array.dtype.kind in "iu" and isinstance(min or max, float):
            x = cast(x, _float())
        return clip(x, min, max)
    out = x
    if min is not None:
        out = maximum(out, min)
    if max is not None:
        out = minimum(out, max)
    return out


def _float() -> np.dtype:
    return dtypes.get_default_dtype()


def masked_fill(x: Tensor, mask: Any, value: Any) -> Tensor:
    """x with `value` where mask (a boolean tensor broadcasting to x) is true; x's dtype."""
    mask = mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask))
    if mask.array.dtype != np.bool_:
        raise RuntimeError(f"masked_fill: expected a boolean mask; got dtype {mask.dtype}")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError("masked_fill: only supports a 0-dimensional value tensor, but "
                               f"got a tensor with {value.ndim} dimensions")
        value = cast(value, x.dtype)
    else:
        value = Tensor(np.asarray(value, dtype=x.dtype))
    return where(mask, value, x)


# -- no gradient: logic, bits, tests of values -----------------------------------------------
def logical(op: Callable[..., Any], *xs: Any) -> Tensor:
    """A logical or bitwise op on tensors (and numbers), with PyTorch's promotion."""
    if len(xs) == 2:
        xs = operands(*xs)
    return constant_op(op, *xs)


def isclose(a: Tensor, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
            equal_nan: bool = False) -> Tensor:
    """|a - b| <= atol + rtol * |b|, elementwise."""
    return constant_op(lambda x, y: np.isclose(x, y, rtol, atol, equal_nan), *operands(a, b))


def allclose(a: Tensor, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    """Whether every element of a is close to b (a Python bool)."""
    return bool(isclose(a, b, rtol, atol, equal_nan).array.all())


def equal(a: Tensor, b: Tensor) -> bool:
    """Whether a and b have the same shape and elements (a Python bool)."""
    return tuple(a.shape) == tuple(b.shape) and bool((a.array == b.array).all())
