"""Tensor methods for elementwise math, products and comparisons (PyTorch's names); the
ops are in `lamina.functions` (math, elementwise, activation, linalg)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _unary(name: str) -> Any:
    def method(self: Any) -> Any:
        from lamina.functions.elementwise import unary

        return unary(name, self)
    method.__name__ = name
    method.__doc__ = f"{name}(x), elementwise."
    return method


def _step(name: str) -> Any:
    def method(self: Any) -> Any:
        from lamina.functions.elementwise import step

        return step(name, self)
    method.__name__ = name
    method.__doc__ = f"{name}(x), elementwise; its gradient is zero."
    return method


def _logic(name: str, op: Any, unary: bool = False) -> Any:
    def method(self: Any, *other: Any) -> Any:
        from lamina.functions.elementwise import logical

        return logical(op, self, *other)
    method.__name__ = name
    method.__doc__ = f"{op.__name__}, elementwise (no gradient)."
    return method


class MathMethods:
    """add, sub, mul, div, pow, exp, log, sin, clamp, matmul, eq, isnan, softmax, ..."""

    __slots__ = ()

    def add(self, other: Any, *, alpha: Any = 1) -> Any:
        """self + alpha * other."""
        from lamina.functions.math import add

        return add(self, other if alpha == 1 else other * alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Any:
        """self - alpha * other."""
        from lamina.functions.math import sub

        return sub(self, other if alpha == 1 else other * alpha)

    subtract = sub

    def mul(self, other: Any) -> Any:
        """self * other, elementwise."""
        from lamina.functions.math import mul

        return mul(self, other)

    multiply = mul

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Any:
        """self / other (true division; or rounded with rounding_mode 'trunc' / 'floor')."""
        from lamina.functions.math import div

        return div(self, other, rounding_mode)

    divide = true_divide = div

    def floor_divide(self, other: Any) -> Any:
        return self.div(other, rounding_mode="floor")

    def pow(self, exponent: Any) -> Any:
        """self ** exponent."""
        from lamina.functions.math import pow

        return pow(self, exponent)

    def neg(self) -> Any:
        return -self

    negative = neg

    def abs(self) -> Any:
        """|x|; the gradient at 0 is 0."""
        from lamina.functions.math import abs

        return abs(self)

    absolute = abs

    def exp(self) -> Any:
        from lamina.functions.math import exp

        return exp(self)

    def log(self) -> Any:
        from lamina.functions.math import log

        return log(self)

    def sqrt(self) -> Any:
        from lamina.functions.math import sqrt

        return sqrt(self)

    expm1, exp2, log1p, log2, log10 = (_unary(n) for n in
                                       ("expm1", "exp2", "log1p", "log2", "log10"))
    rsqrt, square, reciprocal = (_unary(n) for n in ("rsqrt", "square", "reciprocal"))
    sin, cos, tan, asin, acos, atan = (_unary(n) for n in
                                       ("sin", "cos", "tan", "asin", "acos", "atan"))
    sinh, cosh, asinh, atanh, erf, frac = (_unary(n) for n in
                                           ("sinh", "cosh", "asinh", "atanh", "erf", "frac"))
    arcsin, arccos, arctan = asin, acos, atan
    floor, ceil, trunc, sign = (_step(n) for n in ("floor", "ceil", "trunc", "sign"))
    fix = trunc

    def round(self, *, decimals: int = 0) -> Any:
        """Round half to even, to `decimals` places."""
        from lamina.functions.elementwise import round

        return round(self, decimals)

    def sigmoid(self) -> Any:
        from lamina.functions.activation import sigmoid

        return sigmoid(self)

    def tanh(self) -> Any:
        from lamina.functions.activation import tanh

        return tanh(self)

    def relu(self) -> Any:
        from lamina.functions.activation import relu

        return relu(self)

    def softmax(self, dim: int, dtype: Any = None) -> Any:
        """exp(x) / sum(exp(x)) along `dim`."""
        from lamina.functions.activation import softmax

        return softmax(self if dtype is None else self.to(dtype), dim)

    def log_softmax(self, dim: int, dtype: Any = None) -> Any:
        """log(softmax(x)) along `dim`, computed stably."""
        from lamina.functions.activation import log_softmax

        return log_softmax(self if dtype is None else self.to(dtype), dim)

    def fmod(self, other: Any) -> Any:
        """Remainder with the sign of self."""
        from lamina.functions.elementwise import fmod

        return fmod(self, other)

    def remainder(self, other: Any) -> Any:
        """Remainder with the sign of other (Python's %)."""
        from lamina.functions.elementwise import remainder

        return remainder(self, other)

    def atan2(self, other: Any) -> Any:
        from lamina.functions.elementwise import atan2

        return atan2(self, other)

    arctan2 = atan2

    def lerp(self, end: Any, weight: Any) -> Any:
        """self + weight * (end - self)."""
        from lamina.functions.elementwise import lerp

        return lerp(self, end, weight)

    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """Values limited to [min, max]."""
        from lamina.functions.elementwise import clamp

        return clamp(self, min, max)

    clip = clamp

    def maximum(self, other: Any) -> Any:
        from lamina.functions.math import maximum

        return maximum(self, other)

    def minimum(self, other: Any) -> Any:
        from lamina.functions.math import minimum

        return minimum(self, other)

    def where(self, condition: Any, other: Any) -> Any:
        """self where condition, else other."""
        from lamina.functions.math import where

        return where(condition, self, other)

    def matmul(self, other: Any) -> Any:
        from lamina.functions.math import matmul

        return matmul(self, other)

    def mm(self, other: Any) -> Any:
        from lamina.functions.linalg import mm

        return mm(self, other)

    def bmm(self, other: Any) -> Any:
        from lamina.functions.linalg import bmm

        return bmm(self, other)

    def mv(self, vec: Any) -> Any:
        from lamina.functions.linalg import mv

        return mv(self, vec)

    def dot(self, other: Any) -> Any:
        from lamina.functions.linalg import dot

        return dot(self, other)

    def outer(self, other: Any) -> Any:
        from lamina.functions.linalg import outer

        return outer(self, other)

    ger = outer

    def addmm(self, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1) -> Any:
        """beta * self + alpha * (mat1 @ mat2)."""
        from lamina.functions.linalg import addmm

        return addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    # comparisons (the operators are on Tensor itself)
    def eq(self, other: Any) -> Any:
        return self == other

    def ne(self, other: Any) -> Any:
        return self != other

    def lt(self, other: Any) -> Any:
        return self < other

    def le(self, other: Any) -> Any:
        return self <= other

    def gt(self, other: Any) -> Any:
        return self > other

    def ge(self, other: Any) -> Any:
        return self >= other

    less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne

    isnan = _logic("isnan", np.isnan)
    isinf = _logic("isinf", np.isinf)
    isfinite = _logic("isfinite", np.isfinite)
    isposinf = _logic("isposinf", np.isposinf)
    isneginf = _logic("isneginf", np.isneginf)
    logical_not = _logic("logical_not", np.logical_not)
    logical_and = _logic("logical_and", np.logical_and)
    logical_or = _logic("logical_or", np.logical_or)
    logical_xor = _logic("logical_xor", np.logical_xor)
    bitwise_not = _logic("bitwise_not", np.invert)
    bitwise_and = _logic("bitwise_and", np.bitwise_and)
    bitwise_or = _logic("bitwise_or", np.bitwise_or)
    bitwise_xor = _logic("bitwise_xor", np.bitwise_xor)

    def isclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8,
                equal_nan: bool = False) -> Any:
        from lamina.functions.elementwise import isclose

        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8,
                 equal_nan: bool = False) -> bool:
        from lamina.functions.elementwise import allclose

        return allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other: Any) -> bool:
        from lamina.functions.elementwise import equal

        return equal(self, other)
