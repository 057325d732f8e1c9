"""Tensor methods for elementwise math (PyTorch's names): arithmetic, exp, log and the
other unary functions, rounding, clamp, maximum, where. The ops are in `lamina.functions`
(math, unary, elementwise); matrix products are in .products, activations in
.activations, comparisons in .compare."""

from __future__ import annotations

from typing import Any


def _unary(name: str) -> Any:
    def method(self: Any) -> Any:
        from lamina.functions.elementwise import unary

        return unary(name, self)
    method.__name__ = name
    method.__doc__ = (f"{name}(x), elementwise.\n\nExample:\n"
                      f"    >>> lm.tensor([0.5, 0.25]).{name}().shape\n    lamina.Size([2])")
    return method


def _step(name: str) -> Any:
    def method(self: Any) -> Any:
        from lamina.functions.elementwise import step

        return step(name, self)
    method.__name__ = name
    method.__doc__ = (f"{name}(x), elementwise; its gradient is zero.\n\nExample:\n"
                      f"    >>> lm.tensor([-1.5, 2.5]).{name}().shape\n    lamina.Size([2])")
    return method


class MathMethods:
    """add, sub, mul, div, pow, exp, log, sin, floor, round, clamp, maximum, ..."""

    __slots__ = ()

    def add(self, other: Any, *, alpha: Any = 1) -> Any:
        """self + alpha * other.

        Examples:
            >>> lm.tensor([1.0, 2.0]).add(lm.tensor([1.0, 1.0]), alpha=10)
            tensor([11., 12.])
        """
        from lamina.functions.math import add

        return add(self, other if alpha == 1 else other * alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Any:
        """self - alpha * other.

        Examples:
            >>> lm.tensor([1.0, 2.0]).sub(1)
            tensor([0., 1.])
        """
        from lamina.functions.math import sub

        return sub(self, other if alpha == 1 else other * alpha)

    subtract = sub

    def mul(self, other: Any) -> Any:
        """self * other, elementwise.

        Examples:
            >>> lm.tensor([1.0, 2.0]).mul(3)
            tensor([3., 6.])
        """
        from lamina.functions.math import mul

        return mul(self, other)

    multiply = mul

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Any:
        """self / other (true division; or rounded with rounding_mode 'trunc' / 'floor').

        Examples:
            >>> lm.tensor([1, 3]).div(2)
            tensor([0.5000, 1.5000])
        """
        from lamina.functions.math import div

        return div(self, other, rounding_mode)

    divide = true_divide = div

    def floor_divide(self, other: Any) -> Any:
        """self / other rounded down (integers stay integers); no gradient.

        Examples:
            >>> lm.tensor([7, -7]).floor_divide(2)
            tensor([ 3, -4])
        """
        return self.div(other, rounding_mode="floor")

    def pow(self, exponent: Any) -> Any:
        """self ** exponent.

        Examples:
            >>> lm.tensor([2.0, 3.0]).pow(2)
            tensor([4., 9.])
        """
        from lamina.functions.math import pow

        return pow(self, exponent)

    def neg(self) -> Any:
        """-self.

        Examples:
            >>> lm.tensor([1.0, -2.0]).neg()
            tensor([-1.,  2.])
        """
        return -self

    negative = neg

    def abs(self) -> Any:
        """|x|; the gradient at 0 is 0.

        Examples:
            >>> lm.tensor([1.0, -2.0]).neg()
            tensor([-1.,  2.])
        """
        from lamina.functions.unary import abs

        return abs(self)

    absolute = abs

    def exp(self) -> Any:
        """e ** self, elementwise.

        Examples:
            >>> lm.tensor([0.0]).exp()
            tensor([1.])
        """
        from lamina.functions.unary import exp

        return exp(self)

    def log(self) -> Any:
        """The natural logarithm, elementwise.

        Examples:
            >>> lm.tensor([1.0]).log()
            tensor([0.])
        """
        from lamina.functions.unary import log

        return log(self)

    def sqrt(self) -> Any:
        """The square root, elementwise.

        Examples:
            >>> lm.tensor([4.0, 9.0]).sqrt()
            tensor([2., 3.])
        """
        from lamina.functions.unary import sqrt

        return sqrt(self)

    expm1, exp2, log1p, log2, log10 = (_unary(n) for n in
                                       ("expm1", "exp2", "log1p", "log2", "log10"))
    rsqrt, square, reciprocal = (_unary(n) for n in ("rsqrt", "square", "reciprocal"))
    sin, cos, tan, asin, acos, atan = (_unary(n) for n in
                                       ("sin", "cos", "tan", "asin", "acos", "atan"))
    sinh, cosh, asinh, atanh, erf, frac = (_unary(n) for n in
                                           ("sinh", "cosh", "asinh", "atanh", "erf", "frac"))
    erfinv = _unary("erfinv")
    arcsin, arccos, arctan = asin, acos, atan
    floor, ceil, trunc, sign = (_step(n) for n in ("floor", "ceil", "trunc", "sign"))
    fix = trunc

    def round(self, *, decimals: int = 0) -> Any:
        """Round half to even, to `decimals` places.

        Examples:
            >>> lm.tensor([0.5, 1.5, 2.25]).round()
            tensor([0., 2., 2.])
        """
        from lamina.functions.elementwise import round

        return round(self, decimals)

    def fmod(self, other: Any) -> Any:
        """Remainder with the sign of self.

        Examples:
            >>> lm.tensor([-3, 3]).fmod(2)
            tensor([-1,  1])
        """
        from lamina.functions.elementwise import fmod

        return fmod(self, other)

    def remainder(self, other: Any) -> Any:
        """Remainder with the sign of other (Python's %).

        Examples:
            >>> lm.tensor([-3, 3]).remainder(2)
            tensor([1, 1])
        """
        from lamina.functions.elementwise import remainder

        return remainder(self, other)

    def atan2(self, other: Any) -> Any:
        """The angle of the point (other, self), elementwise.

        Examples:
            >>> lm.tensor([1.0, -1.0]).atan2(lm.tensor([1.0, 1.0]))
            tensor([ 0.7854, -0.7854])
        """
        from lamina.functions.elementwise import atan2

        return atan2(self, other)

    arctan2 = atan2

    def lerp(self, end: Any, weight: Any) -> Any:
        """self + weight * (end - self).

        Examples:
            >>> lm.tensor([0.0, 10.0]).lerp(lm.tensor([10.0, 20.0]), 0.5)
            tensor([ 5., 15.])
        """
        from lamina.functions.elementwise import lerp

        return lerp(self, end, weight)

    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """Values limited to [min, max].

        Examples:
            >>> lm.tensor([-2.0, 0.5, 3.0]).clamp(min=0, max=1)
            tensor([0.0000, 0.5000, 1.0000])
        """
        from lamina.functions.elementwise import clamp

        return clamp(self, min, max)

    clip = clamp

    def maximum(self, other: Any) -> Any:
        """The larger of self and other, elementwise (ties split the gradient).

        Examples:
            >>> lm.tensor([1, 5]).maximum(lm.tensor([3, 2]))
            tensor([3, 5])
        """
        from lamina.functions.math import maximum

        return maximum(self, other)

    def minimum(self, other: Any) -> Any:
        """The smaller of self and other, elementwise (ties split the gradient).

        Examples:
            >>> lm.tensor([1, 5]).minimum(lm.tensor([3, 2]))
            tensor([1, 2])
        """
        from lamina.functions.math import minimum

        return minimum(self, other)

    def where(self, condition: Any, other: Any) -> Any:
        """self where condition, else other.

        Examples:
            >>> x = lm.tensor([1.0, -2.0])
            >>> x.where(x > 0, lm.zeros(2))
            tensor([1., 0.])
        """
        from lamina.functions.math import where

        return where(condition, self, other)
