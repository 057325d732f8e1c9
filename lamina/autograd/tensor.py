"""`Tensor`: an array, its gradient and the Function that made it, with PyTorch's surface.

The core lives here: construction, `.data` / `.grad` / `.array`, version counters, the
operators. The rest of PyTorch's method surface comes from the mixins beside this file
(tensor_autograd, tensor_shape, tensor_index, tensor_math, tensor_compare, tensor_reduce,
tensor_convert), which hand the work to the ops in `lamina.functions`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes, state
from lamina.autograd.tensor_autograd import AutogradMethods
from lamina.autograd.tensor_compare import CompareMethods
from lamina.autograd.tensor_convert import ConvertMethods
from lamina.autograd.tensor_index import IndexMethods
from lamina.autograd.tensor_math import MathMethods
from lamina.autograd.tensor_reduce import ReduceMethods
from lamina.autograd.tensor_shape import ShapeMethods
from lamina.backend import get_array_module, is_array, to_numpy


def _is_float(dtype: Any) -> bool:
    return np.dtype(dtype).kind in "fc"


class Tensor(AutogradMethods, ShapeMethods, IndexMethods, MathMethods, CompareMethods,
             ReduceMethods, ConvertMethods):
    """An n-dimensional array that records how it was computed, for backward.

    Attributes:
        array: the backend array (NumPy, or CuPy on a GPU). Ops and optimizers work on it.
        data: a Tensor sharing `array`, cut from the graph (PyTorch's `.data`).
        grad: the accumulated gradient, a Tensor of this tensor's shape and dtype, or None.
        requires_grad: whether ops on this tensor are recorded and gradients reach it.
            Only floating-point tensors may require grad.
        grad_fn: the Function that produced this tensor (Chainer's name: `creator`);
            None for leaves.

    Build tensors with `lm.tensor(...)`, `lm.zeros(...)` and the like; ops return new ones:

        >>> x = lm.tensor([[1.0, 2.0]], requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([[2., 4.]])
    """

    __slots__ = ("array", "_grad", "_requires_grad", "creator", "generation", "output_index",
                 "name", "_vc", "_extra", "__weakref__")

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

    def __init__(self, data: Any = None, *sizes: int, requires_grad: bool = False,
                 name: str | None = None) -> None:
        if type(data) is int:
            # PyTorch's legacy constructor: Tensor(2, 3) is a float tensor of that shape.
            data = np.zeros((int(data), *sizes), dtype=dtypes.get_default_dtype())
        elif sizes:
            raise TypeError(f"Tensor: expected sizes as ints; got {(data, *sizes)}")
        elif data is None:
            data = np.zeros((0,), dtype=dtypes.get_default_dtype())
        elif not isinstance(data, np.ndarray):
            if isinstance(data, Tensor):
                data = data.array
            elif not is_array(data):
                data = dtypes.as_array(data)
        self.array = data
        self._grad = None
        self.creator = None
        self.generation = 0
        self.output_index = 0
        self.name = name
        # the version counter, a one-element list shared with views; made on first need
        self._vc = None
        # rarely used state, in one slot (hooks, retain_grad, places before in-place writes)
        self._extra = None
        self._requires_grad = False
        if requires_grad:
            self.requires_grad = True
        if state.tracer is not None:
            state.tracer.created(self)

    @classmethod
    def _from_op(cls, data: Any, creator: Any, generation: int, index: int) -> Tensor:
        """Output `index` of an op: skips the checks of __init__ on the hot path."""
        t = object.__new__(cls)
        t.array = data
        t._grad = None
        t.creator = creator
        t.generation = generation
        t.output_index = index
        t.name = None
        t._vc = None
        t._extra = None
        t._requires_grad = True
        return t

    # -- the array, .data and .grad ------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """A Tensor sharing this one's array, outside the graph and its version counter.

        Examples:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> x.data.add_(1); x
            tensor([2.])
            tensor([2.], requires_grad=True)
        """
        return Tensor(self.array)

    @data.setter
    def data(self, value: Any) -> None:
        self.array = value.array if isinstance(value, Tensor) else value

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by backward (a Tensor), or None before the first.

        Examples:
            >>> x = lm.tensor([1.0, 2.0], requires_grad=True)
            >>> (x * x).sum().backward()
            >>> x.grad
            tensor([2., 4.])
        """
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            value = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
            if value.array.shape != self.array.shape:
                raise RuntimeError(
                    f"Tensor.grad: assigned grad has shape {tuple(value.shape)}; expected the "
                    f"tensor's shape {tuple(self.shape)}"
                )
        self._grad = value

    @property
    def requires_grad(self) -> bool:
        """Whether ops on this tensor are recorded for backward.

        Examples:
            >>> lm.zeros(1).requires_grad, lm.zeros(1, requires_grad=True).requires_grad
            (False, True)
        """
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if value and not _is_float(self.array.dtype):
            raise RuntimeError(
                f"Tensor: only floating-point tensors can require gradients; got dtype "
                f"{self.array.dtype}. Convert first: x.float()"
            )
        if not value and self.creator is not None:
            raise RuntimeError(
                "Tensor: requires_grad can be switched off only on a leaf; use "
                "x = x.detach() to cut a result from the graph"
            )
        self._requires_grad = bool(value)

    @property
    def grad_fn(self) -> Any:
        """The Function that produced this tensor, None for a leaf (alias of `creator`).

        Examples:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> x.grad_fn is None, (x * 2).grad_fn is not None
            (True, True)
        """
        return self.creator

    @property
    def is_leaf(self) -> bool:
        """Whether no op made this tensor (a parameter, an input, a detached value).

        Examples:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> x.is_leaf, (x * 2).is_leaf
            (True, False)
        """
        return self.creator is None

    @property
    def _version(self) -> int:
        """How many in-place changes this tensor's memory has seen (shared with its views)."""
        vc = self._vc
        return vc[0] if vc else 0

    def _extras(self) -> dict[str, Any]:
        """The rarely used state (hooks, retain_grad, past places), made on first need."""
        if self._extra is None:
            self._extra = {}
        return self._extra

    def _counter(self) -> list[int]:
        """The version counter, made now if no write or view has needed it yet."""
        if self._vc is None:
            self._vc = [0]
        return self._vc

    @property
    def shape(self) -> dtypes.Size:
        """The sizes of the dims (a `lamina.Size`, a tuple).

        Examples:
            >>> lm.zeros(2, 3).shape
            lamina.Size([2, 3])
        """
        return dtypes.Size(self.array.shape)

    @property
    def dtype(self) -> Any:
        """The element type.

        Examples:
            >>> lm.zeros(2).dtype == lm.float32
            True
        """
        return self.array.dtype

    @property
    def ndim(self) -> int:
        """The number of dims.

        Examples:
            >>> lm.zeros(2, 3).ndim
            2
        """
        return self.array.ndim

    @property
    def device(self) -> dtypes.device:
        """Where the tensor lives: always the CPU.

        Examples:
            >>> lm.zeros(2).device
            device(type='cpu')
        """
        return dtypes.CPU

    @property
    def is_cuda(self) -> bool:
        """False: lamina computes on the CPU.

        Examples:
            >>> lm.zeros(2).is_cuda
            False
        """
        return False

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
        return _math.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _math.matmul(other, self)

    def __neg__(self) -> Tensor:
        return _math.neg(self)

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        return _math.abs(self)

    def __invert__(self) -> Tensor:
        return self.bitwise_not()

    def __and__(self, other: Any) -> Tensor:
        return self.bitwise_and(other)

    def __or__(self, other: Any) -> Tensor:
        return self.bitwise_or(other)

    def __xor__(self, other: Any) -> Tensor:
        return self.bitwise_xor(other)

    __rand__, __ror__, __rxor__ = __and__, __or__, __xor__

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

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        arr = to_numpy(self.array)
        body = np.array2string(arr, separator=", ", prefix="tensor(")
        extra = ""
        if arr.dtype not in (dtypes.get_default_dtype(), np.dtype(np.int64), np.dtype(bool)):
            extra += f", dtype=lamina.{arr.dtype}"
        if arr.size == 0 and arr.shape != (0,):
            extra += f", size={tuple(arr.shape)}"
        if self.creator is not None:
            extra += f", grad_fn=<{self.creator.name}Backward>"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"


def _is_int(k: Any) -> bool:
    return isinstance(k, (int, np.integer)) and not isinstance(k, bool)


def _mixes_ints_and_arrays(key: tuple[Any, ...]) -> bool:
    arrays = any(isinstance(k, (list, np.ndarray)) or (isinstance(k, Tensor) and k.ndim)
                 for k in key)
    return arrays and any(_is_int(k) for k in key)


# The ufuncs behind Python's operators, and the lamina ops they run as on tensors.
_UFUNC_OPS = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
              "power": "pow", "matmul": "matmul", "negative": "neg", "maximum": "maximum",
              "minimum": "minimum"}


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of `data` (torch.tensor).

    Args:
        data: a NumPy array (its dtype is kept: float64 stays float64), a Tensor (copied),
            a Python number or a nested list (floats take the default dtype, float32;
            ints int64; bools bool).
        dtype: convert to this dtype (`lamina.float64`, `"float32"`, `np.int32`, ...).
        device: "cpu" (lamina computes on the CPU here).
        requires_grad: record ops on it and accumulate its gradient in `.grad`.

    Raises:
        RuntimeError: requires_grad=True on a non-floating dtype, or a GPU device.
        TypeError: data of a kind a tensor cannot hold (strings, objects, complex).

    Examples:
        >>> w = lm.tensor(np.zeros((3, 2)), requires_grad=True)   # float64
        >>> b = lm.tensor([0.5, 0.5])                             # float32
    """
    dtypes.check_device(device)
    if isinstance(data, Tensor):
        data = data.array
    dtype = dtypes.resolve(dtype)
    if is_array(data):
        xp = get_array_module(data)
        arr = xp.array(data, dtype=dtype, copy=True)
        dtypes.check_kind(arr.dtype)
    else:
        arr = dtypes.as_array(data, dtype, copy=True)
    return Tensor(arr, requires_grad=requires_grad)


# Imported last: these modules build on Tensor, and Tensor's operators call them.
from lamina.functions import array as _array  # noqa: E402
from lamina.functions import math as _math  # noqa: E402
from lamina.functions import operands as _operands  # noqa: E402
