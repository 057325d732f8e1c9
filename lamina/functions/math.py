"""Elementwise binary arithmetic with broadcasting (add, sub, mul, div, pow, maximum,
minimum, where): the primitives behind Tensor's operators. Unary ones are in
lamina.functions.unary, the matrix product in lamina.functions.product, NumPy-style axis
reductions in lamina.functions.axis_reductions."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import sum_to
from lamina.functions.operands import cast, constant_op, operands


class _Binary(Function):
    """A broadcasting binary op; `compute(a, b, out=None)` is its ufunc, which writes into
    `out` where given, as NumPy's do."""

    def forward(self, a: Any, b: Any) -> Any:
        self.a_meta = (a.shape, a.dtype)
        self.b_meta = (b.shape, b.dtype)
        try:
            return self.compute(a, b)
        except ValueError:
            if a.shape == b.shape or _broadcasts(a.shape, b.shape):
                raise
            raise ShapeError(f"{type(self).__name__.lower()}: shapes do not broadcast; "
                             f"expected equal sizes or 1 in each trailing axis, got {a.shape} "
                             f"and {b.shape}") from None

    def unbroadcast(self, ga: Any, gb: Any) -> tuple[Any, Any]:
        need_a, need_b = self.needs_input_grad
        return (_to_input(ga, self.a_meta) if need_a else None,
                _to_input(gb, self.b_meta) if need_b else None)


def _to_input(g: Any, meta: tuple[tuple[int, ...], Any]) -> Any:
    """A broadcast result's gradient summed back to an input's (shape, dtype)."""
    return sum_to(g, meta[0]).astype(meta[1], copy=False)


def _broadcasts(*shapes: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        return False
    return True


class Add(_Binary):
    complex_rule = "holomorphic"
    keeps_inputs = False  # backward reads only the inputs' shapes and dtypes

    def compute(self, a: Any, b: Any, *, out: Any = None) -> Any:
        return np.add(a, b, out=out)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        return self.unbroadcast(gy, gy)


class Sub(_Binary):
    complex_rule = "holomorphic"
    keeps_inputs = False

    def compute(self, a: Any, b: Any, *, out: Any = None) -> Any:
        return np.subtract(a, b, out=out)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        return self.unbroadcast(gy, -gy if self.needs_input_grad[1] else None)


class Mul(_Binary):
    complex_rule = "holomorphic"

    def compute(self, a: Any, b: Any, *, out: Any = None) -> Any:
        need_a, need_b = self.needs_input_grad
        self.save_for_backward(a if need_b else None, b if need_a else None)
        return np.multiply(a, b, out=out)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        a, b = self.saved_tensors
        need_a, need_b = self.needs_input_grad
        return self.unbroadcast(gy * b if need_a else None, gy * a if need_b else None)


class Div(_Binary):
    complex_rule = "holomorphic"

    def compute(self, a: Any, b: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 is inf, as in PyTorch
            y = a / b
        self.save_for_backward(b, y if self.needs_input_grad[1] else None)
        return y

    def backward(self, gy: Any) -> tuple[Any, Any]:
        b, y = self.saved_tensors
        ga = gy / b
        # d(a/b)/db = -a/b^2 = -y/b
        gb = -ga * y if self.needs_input_grad[1] else None
        return self.unbroadcast(ga, gb)


class Pow(_Binary):
    def compute(self, a: Any, b: Any) -> Any:
        # (-1) ** 0.5 is NaN and 0 ** -1 inf, quietly, as in PyTorch (and PowScalar)
        with np.errstate(divide="ignore", invalid="ignore"):
            y = a**b
        self.save_for_backward(a, b, y)
        return y

    def backward(self, gy: Any) -> tuple[Any, Any]:
        a, b, y = self.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore"):
            ga = gy * b * a ** (b - 1) if self.needs_input_grad[0] else None
        gb = None
        if self.needs_input_grad[1]:
            # d(a^b)/db = a^b log a; defined as 0 where a == 0 (PyTorch's convention).
            with np.errstate(divide="ignore", invalid="ignore"):
                log_a = np.where(a > 0, np.log(np.where(a > 0, a, 1)), 0)
            gb = gy * y * log_a
        return self.unbroadcast(ga, gb)


class _Pick(_Binary):
    """Elementwise max or min of two tensors: the gradient goes to the input picked, and
    is split in half where they tie (PyTorch's rule), so a tie has no favourite."""

    def compute(self, a: Any, b: Any) -> Any:
        a_wins = self.wins(a, b)
        self.save_for_backward(a_wins, a == b)
        return np.where(a_wins, a, b)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        a_wins, tie = self.saved_tensors
        share = np.where(tie, 0.5, a_wins).astype(gy.dtype, copy=False)
        need_a, need_b = self.needs_input_grad
        return self.unbroadcast(gy * share if need_a else None,
                                gy * (1 - share) if need_b else None)


class Maximum(_Pick):
    wins = staticmethod(np.greater)


class Minimum(_Pick):
    wins = staticmethod(np.less)


class Where(Function):
    """cond ? a : b, elementwise with broadcasting; cond takes no gradient."""

    complex_rule = "holomorphic"

    def forward(self, cond: Any, a: Any, b: Any) -> Any:
        self.a_meta, self.b_meta = (a.shape, a.dtype), (b.shape, b.dtype)
        self.save_for_backward(cond)
        try:
            return np.where(cond, a, b)
        except ValueError:
            raise ShapeError(f"where: shapes do not broadcast; got cond {cond.shape}, "
                             f"a {a.shape} and b {b.shape}") from None

    def backward(self, gy: Any) -> tuple[Any, Any, Any]:
        (cond,) = self.saved_tensors
        zero = gy.dtype.type(0)
        _, need_a, need_b = self.needs_input_grad
        return (None,
                _to_input(np.where(cond, gy, zero), self.a_meta) if need_a else None,
                _to_input(np.where(cond, zero, gy), self.b_meta) if need_b else None)


class PowScalar(Function):
    """x ** c for a constant exponent c: cheaper than Pow and exact at c = 0, 1, 2."""

    complex_rule = "holomorphic"

    def __init__(self, c: float) -> None:
        self.c = c

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 ** -1, (-1) ** 0.5: quietly
            return x**self.c

    def backward(self, gy: Any) -> Any:
        (x,) = self.saved_tensors
        c = self.c
        if c == 2:
            return (gy * 2 * x).astype(x.dtype, copy=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (gy * c * x ** (c - 1)).astype(x.dtype, copy=False)


def add(a: Any, b: Any) -> Tensor:
    """a + b with NumPy broadcasting; gradients are summed back to each input's shape."""
    return Add().apply(*operands(a, b))


def sub(a: Any, b: Any) -> Tensor:
    """a - b with broadcasting."""
    return Sub().apply(*operands(a, b))


def mul(a: Any, b: Any) -> Tensor:
    """a * b (elementwise) with broadcasting."""
    return Mul().apply(*operands(a, b))


def div(a: Any, b: Any, rounding_mode: str | None = None) -> Tensor:
    """a / b with broadcasting. Integers divide to the default float dtype (true division);
    `rounding_mode="trunc"` or `"floor"` rounds the quotient (integers stay integers), and
    its gradient is zero, as in PyTorch.

    Examples:
        >>> lm.tensor([7, -7]).div(2, rounding_mode="floor")
        tensor([ 3, -4])
    """
    a, b = operands(a, b)
    if rounding_mode is None:
        if a.array.dtype.kind not in "fc":
            d = dtypes.get_default_dtype()
            a, b = cast(a, d), cast(b, d)
        return Div().apply(a, b)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor'; got "
                         f"{rounding_mode!r}")
    return _rounded_div(a, b, rounding_mode)


class RoundedQuotient(Function):
    """floor or trunc of a float a / b; a zero gradient to both, as PyTorch's (a step
    function: the result still requires grad where an input does)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def forward(self, a: Any, b: Any) -> Any:
        self.shapes = (a.shape, a.dtype), (b.shape, b.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.floor if self.mode == "floor" else np.trunc)(a / b)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        return tuple(np.zeros(*meta) if need else None
                     for meta, need in zip(self.shapes, self.needs_input_grad))


def _rounded_div(a: Tensor, b: Tensor, mode: str) -> Tensor:
    if a.array.dtype.kind == "f":
        return RoundedQuotient(mode).apply(a, b)

    def op(x: Any, y: Any) -> Any:
        if mode == "floor":
            return np.floor_divide(x, y)
        q = np.abs(x) // np.abs(y)
        return np.where((x < 0) != (y < 0), -q, q).astype(x.dtype)
    return constant_op(op, a, b)


def pow(a: Any, b: Any) -> Tensor:
    """a ** b; a constant Python-number exponent takes a cheaper path."""
    if isinstance(a, Tensor) and isinstance(b, (int, float)) and not isinstance(b, bool):
        if isinstance(b, float) and a.array.dtype.kind in "iub":  # int ** 0.5: a float
            a = cast(a, dtypes.get_default_dtype())
        return PowScalar(b).apply(a)
    return Pow().apply(*operands(a, b))


def maximum(a: Any, b: Any) -> Tensor:
    """The larger of a and b, elementwise with broadcasting (np.maximum); where they tie,
    each gets half the gradient."""
    return Maximum().apply(*operands(a, b))


def minimum(a: Any, b: Any) -> Tensor:
    """The smaller of a and b, elementwise with broadcasting (np.minimum); where they tie,
    each gets half the gradient."""
    return Minimum().apply(*operands(a, b))


def where(cond: Any, a: Any, b: Any) -> Tensor:
    """a where cond is true, else b, elementwise with broadcasting (np.where). cond is a
    boolean tensor or array (`x > 0`) and takes no gradient; a and b get it where they
    were picked.

    Examples:
        >>> y = F.where(x > 0, x, 0.01 * x)   # a leaky ReLU
    """
    cond = cond if isinstance(cond, Tensor) else Tensor(np.asarray(cond))
    if cond.dtype != np.bool_:
        raise TypeError(f"where: cond must be boolean (a comparison such as x > 0); got "
                        f"{cond.dtype}")
    return Where().apply(cond, *operands(a, b))
