"""Tensor's operators, indexing and NumPy-ufunc protocol: each calls an op of
`lamina.functions`."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import state
from lamina.autograd.tensor import Tensor
from lamina.functions import array as _array
from lamina.functions import math as _math
from lamina.functions import operands as _operands
from lamina.functions import product as _product
from lamina.functions import unary as _unary

# The ufuncs behind Python's operators, and the lamina ops they run as on tensors.
_UFUNC_OPS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
              "power": "pow", "matmul": "matmul", "negative": "neg", "maximum": "maximum",
              "minimum": "minimum"}


class OperatorMethods:
    """`+`, `-`, `*`, `/`, `//`, `%`, `**`, `@`, comparisons, `[]` and the in-place
    operators, as PyTorch's."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy's functions on tensors: the arithmetic ufuncs (what `ndarray + tensor` calls)
        run as lamina's ops and keep the graph; any other ufunc (`np.abs(t)`, `out=`) runs
        on the arrays and returns an array, as NumPy does on array-likes."""
        op = _UFUNC_OPS.get(ufunc.__name__) if method == "__call__" and not kwargs else None
        if op is not None:
            return getattr(_math, op)(*inputs)
        arrays = [x.array if isinstance(x, Tensor) else x for x in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(o.array if isinstance(o, Tensor) else o
                                  for o in kwargs["out"])
        return getattr(ufunc, method)(*arrays, **kwargs)

    def __add__(self, other: Any) -> Tensor:
        return _math.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _math.add(other, self)

    def __sub__(self, other: Any) -> Tensor:
        return _math.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _math.sub(other, self)

    def __mul__(self, other: Any) -> Tensor:
        return _math.mul(self, other)

    def __rmul__(self, other: Any) -> Tensor:
        return _math.mul(other, self)

    def __truediv__(self, other: Any) -> Tensor:
        return _math.div(self, other)

    def __rtruediv__(self, other: Any) -> Tensor:
        return _math.div(other, self)

    def __floordiv__(self, other: Any) -> Tensor:
        return self.div(other, rounding_mode="floor")

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _operands.as_operand(other, self).div(self, rounding_mode="floor")

    def __mod__(self, other: Any) -> Tensor:
        return self.remainder(other)

    def __rmod__(self, other: Any) -> Tensor:
        return _operands.as_operand(other, self).remainder(self)

    def __pow__(self, other: Any) -> Tensor:
        return _math.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _math.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _product.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _product.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _unary.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _unary.abs(self)

    def __invert__(self) -> Tensor:
        return self.bitwise_not()

    def __and__(self, other: Any) -> Tensor:
        return self.bitwise_and(other)

    def __or__(self, other: Any) -> Tensor:
        return self.bitwise_or(other)

    def __xor__(self, other: Any) -> Tensor:
        return self.bitwise_xor(other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

    def __lshift__(self, other: Any) -> Tensor:
        return self.bitwise_left_shift(other)

    def __rshift__(self, other: Any) -> Tensor:
        return self.bitwise_right_shift(other)

    def __rlshift__(self, other: Any) -> Tensor:
        from lamina.functions.elementwise import logical

        return logical(np.left_shift, other, self)

    def __rrshift__(self, other: Any) -> Tensor:
        from lamina.functions.elementwise import logical

        return logical(np.right_shift, other, self)

    def __ilshift__(self, other: Any) -> Tensor:
        return self.bitwise_left_shift_(other)

    def __irshift__(self, other: Any) -> Tensor:
        return self.bitwise_right_shift_(other)

    # In-place operators change this tensor's memory (PyTorch's `x += y`), so a parameter
    # updated under no_grad stays the object the optimizer and the model hold.
    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)

    def __getitem__(self, key: Any) -> Tensor:
        if isinstance(key, tuple) and _mixes_ints_and_arrays(key):
            # PyTorch applies integer indices first, as selections; NumPy would broadcast
            # them with the index arrays and move the result's dims
            picked = _array.getitem(self, tuple(
                k if _is_int(k) or k is Ellipsis or k is None else slice(None) for k in key))
            return _array.getitem(picked, tuple(slice(None) if k is None else k
                                                for k in key if not _is_int(k)))
        out = _array.getitem(self, key)
        base = out.array.base
        if base is not None and (base is self.array or base is self.array.base):
            out._vc = self._counter()  # a view: writes through it are writes to this tensor
        return out

    def __setitem__(self, key: Any, value: Any) -> None:
        from lamina.functions.indexing import setitem

        self._inplace(lambda t: setitem(t, key, value))

    # Comparisons give boolean tensors and no gradient. While a plan traces, each is an op,
    # so a mask made from the batch is made again from every batch, not frozen.
    def _compare(self, op: Any, other: Any) -> Tensor:
        if state.tracer is None:
            a, b = _operands.compare_operands(self, other)
            return Tensor(op(a, b))
        return _operands.compare(op, self, other)

    def __lt__(self, other: Any) -> Tensor:
        return self._compare(np.less, other)

    def __le__(self, other: Any) -> Tensor:
        return self._compare(np.less_equal, other)

    def __gt__(self, other: Any) -> Tensor:
        return self._compare(np.greater, other)

    def __ge__(self, other: Any) -> Tensor:
        return self._compare(np.greater_equal, other)

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return self._compare(np.equal, other)

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return self._compare(np.not_equal, other)


def _mixes_ints_and_arrays(key: tuple[Any, ...]) -> bool:
    arrays = any(isinstance(k, (list, np.ndarray)) or (isinstance(k, Tensor) and k.ndim)
                 for k in key)
    return arrays and any(_is_int(k) for k in key)


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, bool)
