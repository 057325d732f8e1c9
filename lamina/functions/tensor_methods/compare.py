"""Tensor methods that compare and test values (eq, lt, isnan, isclose, logical and bitwise
ops): results carry no gradient. The operators (`==`, `<`, `&`, ...) are on Tensor itself."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.tensor_methods.shared import constant


def _logic(name: str, op: Any) -> Any:
    def method(self: Any, *other: Any) -> Any:
        from lamina.functions.elementwise import logical

        return logical(op, self, *other)
    binary = name.endswith(("_and", "_or", "_xor"))
    method.__name__ = name
    method.__doc__ = (f"NumPy's {op.__name__}, elementwise: a tensor of no gradient.\n\n"
                      f"Example:\n    >>> m = lm.tensor([True, False])\n"
                      f"    >>> m.{name}({'~m' if binary else ''}).shape\n"
                      f"    lamina.Size([2])")
    return method


class CompareMethods:
    """eq, ne, lt, le, gt, ge, isnan, isinf, isfinite, isclose, allclose, equal, logical_*,
    signbit, heaviside."""

    __slots__ = ()

    def eq(self, other: Any) -> Any:
        """self == other, elementwise (a bool tensor).

        Examples:
            >>> lm.tensor([1, 2]).eq(lm.tensor([1, 3]))
            tensor([ True, False])
        """
        return self == other

    def ne(self, other: Any) -> Any:
        """self != other, elementwise.

        Examples:
            >>> lm.tensor([1, 2]).ne(1)
            tensor([False,  True])
        """
        return self != other

    def lt(self, other: Any) -> Any:
        """self < other, elementwise.

        Examples:
            >>> lm.tensor([1, 2]).lt(2)
            tensor([ True, False])
        """
        return self < other

    def le(self, other: Any) -> Any:
        """self <= other, elementwise.

        Examples:
            >>> lm.tensor([1, 2]).le(2)
            tensor([True, True])
        """
        return self <= other

    def gt(self, other: Any) -> Any:
        """self > other, elementwise.

        Examples:
            >>> lm.tensor([1, 2]).gt(1)
            tensor([False,  True])
        """
        return self > other

    def ge(self, other: Any) -> Any:
        """self >= other, elementwise.

        Examples:
            >>> lm.tensor([1, 2]).ge(2)
            tensor([False,  True])
        """
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

    def bitwise_left_shift(self, other: Any) -> Any:
        """self << other, elementwise on integers (`<<` too).

        Examples:
            >>> lm.tensor([1, 2]).bitwise_left_shift(2)
            tensor([4, 8])
        """
        from lamina.functions.elementwise import logical

        return logical(np.left_shift, self, other)

    def bitwise_right_shift(self, other: Any) -> Any:
        """self >> other, elementwise on integers (`>>` too): an arithmetic shift.

        Examples:
            >>> lm.tensor([-8, 8]).bitwise_right_shift(2)
            tensor([-2,  2])
        """
        from lamina.functions.elementwise import logical

        return logical(np.right_shift, self, other)

    def isclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8,
                equal_nan: bool = False) -> Any:
        """|self - other| <= atol + rtol * |other|, elementwise.

        Examples:
            >>> lm.tensor([1.0, 2.0]).isclose(lm.tensor([1.0, 2.1]))
            tensor([ True, False])
        """
        from lamina.functions.elementwise import isclose

        return isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8,
                 equal_nan: bool = False) -> bool:
        """Whether every element is close to other (a Python bool).

        Examples:
            >>> lm.tensor([1.0]).allclose(lm.tensor([1.0 + 1e-9]))
            True
        """
        from lamina.functions.elementwise import allclose

        return allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other: Any) -> bool:
        """Whether self and other have one shape and the same elements (a Python bool).

        Examples:
            >>> lm.tensor([1, 2]).equal(lm.tensor([1, 2]))
            True
        """
        from lamina.functions.elementwise import equal

        return equal(self, other)

    def signbit(self) -> Any:
        """Whether each element's sign bit is set (negative numbers and -0.0).

        Examples:
            >>> lm.tensor([-1.0, -0.0, 2.0]).signbit()
            tensor([ True,  True, False])
        """
        return constant(np.signbit(self.detach().numpy()))

    def heaviside(self, values: Any) -> Any:
        """0 where self < 0, 1 where self > 0, `values` where self is 0 (no gradient).

        Examples:
            >>> lm.tensor([-1.0, 0.0, 2.0]).heaviside(lm.tensor([0.5]))
            tensor([0.0000, 0.5000, 1.0000])
        """
        a = self.detach().numpy()
        v = values.detach().numpy() if hasattr(values, "detach") else np.asarray(values)
        return constant(np.heaviside(a, v).astype(np.result_type(a, v)))
