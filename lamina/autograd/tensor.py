"""`Tensor`: an array (`data`), its gradient (`grad`) and the Function that made it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from lamina import config
from lamina.backend import get_array_module, is_array, to_numpy


def _default_dtype(value: Any) -> Any:
    """Python floats, and lists holding a float, become float32; arrays and NumPy scalars
    (an op's 0-d result, a float64 mean) keep their dtype."""
    if is_array(value) or isinstance(value, np.generic):
        return None
    arr = np.asarray(value)
    if arr.dtype.kind == "f":
        return np.float32
    return None


def _is_float(dtype: Any) -> bool:
    return np.dtype(dtype).kind in "fc"


class Tensor:
    """An n-dimensional array that records how it was computed, for backward.

    Attributes:
        data: the backend array (NumPy or CuPy).
        grad: the accumulated gradient, an array of `data`'s shape and dtype, or None.
        requires_grad: whether ops on this tensor are recorded and gradients reach it.
            Only floating-point tensors may require grad.
        creator: the Function that produced this tensor; None for leaves.

    Build tensors with `lm.tensor(...)`; ops return new tensors:

        >>> x = lm.tensor([[1.0, 2.0]], requires_grad=True)
        >>> y = (x * x).sum()
        >>> y.backward()
        >>> x.grad
        array([[2., 4.]], dtype=float32)
    """

    __slots__ = ("data", "grad", "_requires_grad", "creator", "generation", "output_index",
                 "name", "__weakref__")
    # NumPy defers to Tensor's reflected operators (ndarray + Tensor -> Tensor.__radd__).
    __array_ufunc__ = None

    def __init__(self, data: Any, requires_grad: bool = False, name: str | None = None) -> None:
        if not isinstance(data, np.ndarray):
            if isinstance(data, Tensor):
                data = data.data
            elif not is_array(data):
                data = np.asarray(data, dtype=_default_dtype(data))
        self.data = data
        self.grad = None
        self.creator = None
        self.generation = 0
        self.output_index = 0
        self.name = name
        self._requires_grad = False
        if requires_grad:
            self.requires_grad = True
        if config.tracer is not None:
            config.tracer.created(self)

    @classmethod
    def _from_op(cls, data: Any, creator: Any, generation: int, index: int) -> Tensor:
        """Output `index` of an op: skips the checks of __init__ on the hot path."""
        t = object.__new__(cls)
        t.data = data
        t.grad = None
        t.creator = creator
        t.generation = generation
        t.output_index = index
        t.name = None
        t._requires_grad = True
        return t

    # -- properties ---------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and not _is_float(self.data.dtype):
            raise TypeError(
                f"Tensor: only floating-point tensors can require grad; got dtype "
                f"{self.data.dtype}. Convert first: lm.tensor(x, dtype='float32')"
            )
        self._requires_grad = bool(value)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> Any:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def is_leaf(self) -> bool:
        return self.creator is None

    @property
    def T(self) -> Tensor:
        return self.transpose()

    def __len__(self) -> int:
        return len(self.data)

    def __iter__(self) -> Iterator[Tensor]:
        return (self[i] for i in range(len(self)))

    # -- conversion ---------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The data as a NumPy array (copied to the host if it lives on a GPU)."""
        if config.tracer is not None:
            config.tracer.converted(self, "numpy()")
        return to_numpy(self.data)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if config.tracer is not None:
            config.tracer.converted(self, "np.asarray()")
        arr = to_numpy(self.data)
        return arr.astype(dtype) if dtype is not None else arr

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number."""
        if config.tracer is not None:
            config.tracer.converted(self, "item()")
        if self.data.size != 1:
            raise ValueError(f"item: only one-element tensors convert; got shape {self.shape}")
        return self.data.item()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __bool__(self) -> bool:
        if config.tracer is not None:
            config.tracer.converted(self, "bool() (an `if` or `while` on a tensor)")
        if self.data.size != 1:
            raise ValueError(
                f"Tensor of shape {self.shape}: truth value is ambiguous; use .any() or .all()"
            )
        return bool(self.data)

    def detach(self) -> Tensor:
        """A new leaf sharing `data`, cut from the graph."""
        return Tensor(self.data)

    def copy(self) -> Tensor:
        """A new leaf with a copy of `data` (no gradient link)."""
        return Tensor(self.data.copy(), requires_grad=self._requires_grad)

    def astype(self, dtype: Any) -> Tensor:
        """A tensor converted to `dtype`; the gradient is converted back."""
        from lamina.functions.math import astype

        return astype(self, dtype)

    def any(self) -> bool:
        """Whether any element is true (non-zero)."""
        return bool(self.data.any())

    def all(self) -> bool:
        """Whether every element is true (non-zero)."""
        return bool(self.data.all())

    # -- autograd -----------------------------------------------------------------------
    def backward(self, grad: Any = None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into the `.grad` of every leaf that requires grad.

        Args:
            grad: dL/d(self), of self's shape; may be omitted only when self has one element.
            retain_graph: keep saved arrays so backward can run through the graph again.

        Raises:
            RuntimeError: self is not scalar and no grad is given, or the graph was freed.
        """
        from lamina.autograd.engine import backward

        backward(self, grad, retain_graph)

    def zero_grad(self) -> None:
        """Forget the accumulated gradient."""
        self.grad = None

    # -- operators (defined in lamina.functions.math) -----------------------------------
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

    def __pow__(self, other: Any) -> Tensor:
        return _math.pow(self, other)

    def __rpow__(self, other: Any) -> Tensor:
        return _math.pow(other, self)

    def __matmul__(self, other: Any) -> Tensor:
        return _math.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _math.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _math.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _math.abs(self)

    def __getitem__(self, key: Any) -> Tensor:
        return _array.getitem(self, key)

    # Comparisons give boolean tensors and no gradient. While a plan traces, each is an op,
    # so a mask made from the batch is made again from every batch, not frozen.
    def _compare(self, op: Any, other: Any) -> Tensor:
        if config.tracer is None:
            return Tensor(op(self.data, _raw(other)))
        return _math.compare(op, self, other)

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

    __hash__ = object.__hash__

    # -- methods ------------------------------------------------------------------------
    def sum(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        """Sum over `axis` (None: all axes); see `lamina.functions.sum`."""
        return _math.sum(self, axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        """Mean over `axis` (None: all axes)."""
        return _math.mean(self, axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        """Largest value over `axis`; tied maxima share the gradient."""
        return _math.max(self, axis, keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tensor:
        """Smallest value over `axis`; tied minima share the gradient."""
        return _math.min(self, axis, keepdims)

    def reshape(self, *shape: Any) -> Tensor:
        """The same data with a new shape, as `x.reshape(2, -1)` or `x.reshape((2, -1))`."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _array.reshape(self, shape)

    def transpose(self, *axes: Any) -> Tensor:
        """Axes permuted (reversed when none are given)."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _array.transpose(self, axes or None)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
        """Axes start_dim..end_dim merged into one (torch.flatten)."""
        from lamina.functions.array import flatten

        return flatten(self, start_dim, end_dim)

    def exp(self) -> Tensor:
        """e ** x, elementwise."""
        return _math.exp(self)

    def log(self) -> Tensor:
        """Natural logarithm, elementwise."""
        return _math.log(self)

    def sqrt(self) -> Tensor:
        """Square root, elementwise."""
        return _math.sqrt(self)

    def abs(self) -> Tensor:
        """|x|, elementwise."""
        return _math.abs(self)

    def clip(self, lo: float | None = None, hi: float | None = None) -> Tensor:
        """Clamp to [lo, hi] (PyTorch's `clamp`)."""
        return _math.clip(self, lo, hi)

    def relu(self) -> Tensor:
        """max(x, 0), elementwise."""
        from lamina.functions.activation import relu

        return relu(self)

    def sigmoid(self) -> Tensor:
        """1 / (1 + exp(-x)), elementwise."""
        from lamina.functions.activation import sigmoid

        return sigmoid(self)

    def tanh(self) -> Tensor:
        """Hyperbolic tangent, elementwise."""
        from lamina.functions.activation import tanh

        return tanh(self)

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
        extra = f", dtype={self.dtype}"
        if self.creator is not None:
            extra += f", creator={self.creator.name}"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"


def _raw(value: Any) -> Any:
    return value.data if isinstance(value, Tensor) else value


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """Make a leaf tensor from array-like data.

    Args:
        data: a NumPy array (its dtype is kept: float64 stays float64), a Tensor (its data is
            copied), a Python number or a nested list (floats become float32, ints int64).
        requires_grad: record ops on it and accumulate its gradient in `.grad`.
        dtype: convert to this dtype.

    Returns:
        A new leaf Tensor that owns a copy of the data.

    Raises:
        TypeError: requires_grad=True on a non-floating dtype.

    Example:
        >>> w = lm.tensor(np.zeros((3, 2)), requires_grad=True)   # float64
        >>> b = lm.tensor([0.5, 0.5])                             # float32
    """
    if isinstance(data, Tensor):
        data = data.data
    if is_array(data):
        xp = get_array_module(data)
        arr = xp.array(data, dtype=dtype, copy=True)
    else:
        arr = np.array(data, dtype=dtype if dtype is not None else _default_dtype(data))
    return Tensor(arr, requires_grad=requires_grad)


# Imported last: these modules build on Tensor, and Tensor's operators call them.
from lamina.functions import array as _array  # noqa: E402
from lamina.functions import math as _math  # noqa: E402
