"""Arithmetic, comparisons and reductions: the primitives behind Tensor's operators."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import (
    expand_reduced,
    gemm_rows,
    normalize_axis,
    pooled_matmul,
    sum_to,
)
from lamina.functions.operands import cast, constant_op, operands

# -- elementwise binary ops ----------------------------------------------------------------


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
    def compute(self, a: Any, b: Any, *, out: Any = None) -> Any:
        return np.add(a, b, out=out)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        return self.unbroadcast(gy, gy)


class Sub(_Binary):
    def compute(self, a: Any, b: Any, *, out: Any = None) -> Any:
        return np.subtract(a, b, out=out)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        return self.unbroadcast(gy, -gy if self.needs_input_grad[1] else None)


class Mul(_Binary):
    def compute(self, a: Any, b: Any, *, out: Any = None) -> Any:
        need_a, need_b = self.needs_input_grad
        self.save_for_backward(a if need_b else None, b if need_a else None)
        return np.multiply(a, b, out=out)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        a, b = self.saved_tensors
        need_a, need_b = self.needs_input_grad
        return self.unbroadcast(gy * b if need_a else None, gy * a if need_b else None)


class Div(_Binary):
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
        y = a**b
        self.save_for_backward(a, b, y)
        return y

    def backward(self, gy: Any) -> tuple[Any, Any]:
        a, b, y = self.saved_tensors
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
        if a.array.dtype.kind != "f":
            d = dtypes.get_default_dtype()
            a, b = cast(a, d), cast(b, d)
        return Div().apply(a, b)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor'; got "
                         f"{rounding_mode!r}")
    return _rounded_div(a, b, rounding_mode)


def _rounded_div(a: Tensor, b: Tensor, mode: str) -> Tensor:
    def op(x: Any, y: Any) -> Any:
        if x.dtype.kind in "iu":
            if mode == "floor":
                return np.floor_divide(x, y)
            q = np.abs(x) // np.abs(y)
            return np.where((x < 0) != (y < 0), -q, q).astype(x.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (np.floor if mode == "floor" else np.trunc)(x / y)
    return constant_op(op, a, b)


def pow(a: Any, b: Any) -> Tensor:
    """a ** b; a constant Python-number exponent takes a cheaper path."""
    if isinstance(a, Tensor) and isinstance(b, (int, float)) and not isinstance(b, bool):
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


# -- unary elementwise ops -----------------------------------------------------------------


class Neg(Function):
    def forward(self, x: Any) -> Any:
        return -x

    def backward(self, gy: Any) -> Any:
        return -gy


class Exp(Function):
    def forward(self, x: Any) -> Any:
        y = np.exp(x)
        self.save_for_backward(y)
        return y

    def backward(self, gy: Any) -> Any:
        return gy * self.saved_tensors[0]


class Log(Function):
    # log(0) is -inf and log(-1) NaN, quietly, as in PyTorch (and their gradients inf)
    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x)

    def backward(self, gy: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return gy / self.saved_tensors[0]


class Sqrt(Function):
    def forward(self, x: Any) -> Any:
        with np.errstate(invalid="ignore"):  # sqrt(-1) is NaN, quietly, as in PyTorch
            y = np.sqrt(x)
        self.save_for_backward(y)
        return y

    def backward(self, gy: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return gy / (2 * self.saved_tensors[0])


class Abs(Function):
    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return np.abs(x)

    def backward(self, gy: Any) -> Any:
        return gy * np.sign(self.saved_tensors[0])


class Clip(Function):
    def __init__(self, lo: float | None, hi: float | None) -> None:
        self.lo, self.hi = lo, hi

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return np.clip(x, self.lo, self.hi)

    def backward(self, gy: Any) -> Any:
        (x,) = self.saved_tensors
        inside = np.ones(x.shape, dtype=bool)
        if self.lo is not None:
            inside &= x >= self.lo
        if self.hi is not None:
            inside &= x <= self.hi
        return gy * inside


def neg(x: Tensor) -> Tensor:
    """-x."""
    return Neg().apply(x)


def exp(x: Tensor) -> Tensor:
    """e ** x, elementwise."""
    return Exp().apply(x)


def log(x: Tensor) -> Tensor:
    """Natural logarithm, elementwise."""
    return Log().apply(x)


def sqrt(x: Tensor) -> Tensor:
    """Square root, elementwise."""
    return Sqrt().apply(x)


def abs(x: Tensor) -> Tensor:
    """|x|, elementwise; the gradient at 0 is 0 (sign(0))."""
    return Abs().apply(x)


def clip(x: Tensor, lo: float | None = None, hi: float | None = None) -> Tensor:
    """Clamp x to [lo, hi] (PyTorch's `clamp`); the gradient passes where lo <= x <= hi."""
    return Clip(lo, hi).apply(x)


# -- matrix product ------------------------------------------------------------------------


class MatMul(Function):
    def forward(self, a: Any, b: Any) -> Any:
        if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
            raise ShapeError(
                f"matmul: inner dimensions differ; expected a.shape[-1] == b.shape[-2], got "
                f"{a.shape} @ {b.shape}"
            )
        need_a, need_b = self.needs_input_grad
        self.save_for_backward(a if need_b else None, b if need_a else None)
        self.a_meta, self.b_meta = (a.shape, a.dtype), (b.shape, b.dtype)
        return gemm_rows(a, b) if b.ndim == 2 else pooled_matmul(a, b)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        a, b = self.saved_tensors
        (a_shape, a_dtype), (b_shape, b_dtype) = self.a_meta, self.b_meta
        # Vectors act as matrices (a as a row, b as a column), as np.matmul treats them.
        a_mat = (1, *a_shape) if len(a_shape) == 1 else a_shape
        b_mat = (*b_shape, 1) if len(b_shape) == 1 else b_shape
        if len(b_shape) == 1:
            gy = np.expand_dims(gy, -1)
        if len(a_shape) == 1:
            gy = np.expand_dims(gy, -2)
        ga = gb = None
        stacked_a = len(a_shape) > 2 and len(b_shape) == 2  # (..., K) @ (K, N): flat rows
        if self.needs_input_grad[0]:
            bT = np.swapaxes(b.reshape(b_mat), -1, -2)
            ga = gemm_rows(gy, bT) if stacked_a else pooled_matmul(gy, bT)
            ga = sum_to(ga, a_mat).reshape(a_shape).astype(a_dtype, copy=False)
        if self.needs_input_grad[1]:
            if stacked_a:  # summed over the rows by the GEMM itself, not a stack of them
                gb = a.reshape(-1, a_shape[-1]).T @ gy.reshape(-1, gy.shape[-1])
            else:
                gb = pooled_matmul(np.swapaxes(a.reshape(a_mat), -1, -2), gy)
            gb = sum_to(gb, b_mat).reshape(b_shape).astype(b_dtype, copy=False)
        return ga, gb


def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product with NumPy's `matmul` semantics (batched, vectors promoted).

    Raises:
        ShapeError: the inner dimensions differ; the message shows both shapes.
    """
    return MatMul().apply(*operands(a, b))


# -- reductions ----------------------------------------------------------------------------


class Sum(Function):
    def __init__(self, axis: Any, keepdims: bool) -> None:
        self.axis, self.keepdims = axis, keepdims

    def forward(self, x: Any) -> Any:
        self.x_shape = x.shape
        self.axes = normalize_axis(self.axis, x.ndim)
        return np.asarray(x.sum(axis=self.axes, keepdims=self.keepdims))

    def backward(self, gy: Any) -> Any:
        gy = expand_reduced(gy, self.x_shape, self.axes, self.keepdims)
        return np.broadcast_to(gy, self.x_shape)


class Extremum(Function):
    """max or min over axes; tied elements share the gradient equally (like torch.amax)."""

    def __init__(self, axis: Any, keepdims: bool, largest: bool) -> None:
        self.axis, self.keepdims, self.largest = axis, keepdims, largest

    def forward(self, x: Any) -> Any:
        if x.size == 0:
            raise ValueError("max/min: cannot reduce an empty tensor")
        self.axes = normalize_axis(self.axis, x.ndim)
        reduce = np.max if self.largest else np.min
        y = np.asarray(reduce(x, axis=self.axes, keepdims=True))
        self.save_for_backward(x, y)
        return y if self.keepdims else np.squeeze(y, axis=self.axes)

    def backward(self, gy: Any) -> Any:
        x, y = self.saved_tensors
        gy = expand_reduced(gy, x.shape, self.axes, self.keepdims)
        hit = x == y
        count = hit.sum(axis=self.axes, keepdims=True)
        return (hit * (gy / count)).astype(x.dtype, copy=False)


def sum(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Sum over `axis` (None: all axes)."""
    return Sum(axis, keepdims).apply(x)


def mean(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Mean over `axis` (None: all axes)."""
    axes = normalize_axis(axis, x.ndim)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    return mul(sum(x, axis, keepdims), 1.0 / builtins.max(n, 1))


def max(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Largest value over `axis`; ties split the gradient evenly."""
    return Extremum(axis, keepdims, largest=True).apply(x)


def min(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    """Smallest value over `axis`; ties split the gradient evenly."""
    return Extremum(axis, keepdims, largest=False).apply(x)
