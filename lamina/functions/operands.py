"""How ops take their operands: PyTorch's type promotion (`operands`, `cast`,
`promote_all`), dtype conversions (`astype`, `AsType`), and results that carry no gradient
(`constant_op`: comparisons, rounding, integer and boolean ops)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes, promotion, state
from lamina.autograd.function import Function
from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor


def operands(a: Any, b: Any) -> tuple[Tensor, Tensor]:
    """Both operands as Tensors of one dtype, by PyTorch's promotion (`dtypes.result_type`):
    a Python number takes the tensor's kind, float32 with a 0-d float64 stays float32."""
    # The common cases first, each what result_type would give: two tensors of one dtype;
    # a Python number beside a float tensor, or an int beside an integer tensor.
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a.array.dtype == b.array.dtype:
                return a, b
        elif type(b) is float or type(b) is int:
            d = a.array.dtype
            if d.kind == "f" or (type(b) is int and d.kind in "iu"):
                return a, Tensor(np.asarray(b, d))
    elif (type(a) is float or type(a) is int) and isinstance(b, Tensor):
        d = b.array.dtype
        if d.kind == "f" or (type(a) is int and d.kind in "iu"):
            return Tensor(np.asarray(a, d)), b
    d = promotion.result_type(a, b)
    return cast(a, d), cast(b, d)


def cast(v: Any, d: np.dtype) -> Tensor:
    """v as a Tensor of dtype d: a tensor through the differentiable cast, a constant as is."""
    if isinstance(v, Tensor):
        return v if v.array.dtype == d else astype(v, d)
    return Tensor(np.asarray(v, dtype=d))


def floating(x: Tensor) -> Tensor:
    """x, or x cast to the default float dtype where it holds integers or booleans: the
    input of an op whose result is a float whatever its input (exp, sqrt, sigmoid), as
    PyTorch promotes it."""
    return x if x.array.dtype.kind in "fc" else astype(x, dtypes.get_default_dtype())


def promote_all(tensors: list[Tensor]) -> list[Tensor]:
    """Tensors cast to their common dtype (cat, stack), by PyTorch's promotion."""
    d = tensors[0].array.dtype
    for t in tensors[1:]:
        if t.array.dtype != d:
            d = promotion.promote_types(d, t.array.dtype)
    return [cast(t, d) for t in tensors]


def as_operand(v: Any, like: Tensor) -> Tensor:
    """A Python number on the left of an operator, as a 0-d tensor of its own kind."""
    return v if isinstance(v, Tensor) else Tensor(np.asarray(v, promotion.result_type(v, v)))


def compare_operands(a: Tensor, b: Any) -> tuple[Any, Any]:
    """The arrays a comparison works on (NumPy compares mixed dtypes exactly)."""
    return a.array, b.array if isinstance(b, Tensor) else b


def constant_op(op: Any, *xs: Any) -> Tensor:
    """`op` on the arrays of xs as a recorded op with no gradient (comparisons, rounding,
    integer and boolean ops): eager mode and a plan's trace see it alike."""
    with no_grad():
        return Compare(op).apply(*xs)


class Compare(Function):
    """An op whose result has no gradient (np.less, np.equal, floor, ...), on any number
    of inputs."""

    complex_rule = "own"

    def __init__(self, op: Any) -> None:
        self.op = op

    def forward(self, *xs: Any) -> Any:
        return self.op(*xs)

    def backward(self, *gys: Any) -> Any:
        return (None,) * len(self.inputs)


def compare(op: Any, a: Tensor, b: Any) -> Tensor:
    """`op(a, b)` as a recorded op that takes no gradient (Tensor's `<`, `==`, ... while a
    plan traces: eager mode computes the array directly)."""
    return constant_op(op, a, b)


class AsType(Function):
    """A cast, or with `order` a copy in that memory order ("C" for contiguous, "K" to
    keep the input's, as clone does)."""

    complex_rule = "own"

    def __init__(self, dtype: Any, order: str | None = None) -> None:
        self.dtype, self.order = np.dtype(dtype), order

    def forward(self, x: Any) -> Any:
        self.in_dtype = x.dtype
        if self.dtype.kind == "c":
            state.complex_seen = True  # ops now check their operands (complex_rules)
        # As in PyTorch, a value out of the new type's range casts without a warning (to
        # inf for a float; NaN to an integer is undefined in both).
        with np.errstate(over="ignore", invalid="ignore"):
            if self.order is not None:
                return np.array(x, dtype=self.dtype, order=self.order)
            return x.astype(self.dtype)

    def backward(self, gy: Any) -> Any:
        # A copy's gradient is gy itself (as a reshape's is a view of it): no copy of it.
        if gy.dtype.kind == "c" and self.in_dtype.kind != "c":
            gy = gy.real  # a real tensor cast to complex: dL/da, PyTorch's rule
        with np.errstate(over="ignore", invalid="ignore"):
            return gy.astype(self.in_dtype, copy=False)


def astype(x: Tensor, dtype: Any) -> Tensor:
    """Convert to `dtype`; the gradient is converted back. Integer and boolean results
    take no gradient."""
    dtype = dtypes.resolve(dtype)
    if dtype == x.dtype:
        return x
    if dtype.kind not in "fc":
        return constant_op(lambda a: _quiet_cast(a, dtype), x)
    return AsType(dtype).apply(x)


def _quiet_cast(a: Any, dtype: Any) -> Any:
    """a.astype(dtype) without NumPy's warning for NaN or an out-of-range value, which
    PyTorch casts silently (to an undefined integer)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return a.astype(dtype)
