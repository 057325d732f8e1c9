"""`Tensor`: an array, its gradient and the Function that made it.

The core lives here: construction, `.data` / `.grad` / `.array`, version counters, and
(from tensor_autograd) backward and hooks. PyTorch's method surface, the operators
included, calls the ops, so it lives with them: `lamina.functions.tensor_methods`
installs it on Tensor when the ops load (as Chainer's functions install Variable's
operators), and the core imports nothing above itself.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes, printing, state
from lamina.autograd.tensor_autograd import AutogradMethods
from lamina.backend import get_array_module, is_array, to_numpy


def _is_float(dtype: Any) -> bool:
    return np.dtype(dtype).kind in "fc"


class Tensor(AutogradMethods):
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
            elif isinstance(data, (list, tuple)):
                # PyTorch's legacy constructor: Tensor([1, 2]) is a float tensor
                data = np.asarray(dtypes.as_array(data), dtypes.get_default_dtype())
            elif not is_array(data):
                data = dtypes.as_array(data)
        elif data.dtype.kind == "c":
            state.complex_seen = True  # ops now check their operands (complex_rules)
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
        return Tensor(self.array)._layout_from(self)

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

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        arr = to_numpy(self.array)
        suffixes = []
        if arr.size == 0 and arr.ndim != 1 or arr.size and not printing.shows_items():
            suffixes.append(f"size={tuple(arr.shape)}")
        # an empty tensor has no elements to tell an int64 from a float: it names its dtype
        plain = (dtypes.get_default_dtype(),) + (
            (np.dtype(np.int64), np.dtype(bool), dtypes.default_complex()) if arr.size else ())
        if arr.dtype not in plain:
            suffixes.append(f"dtype=lamina.{arr.dtype}")
        if self.creator is not None:
            suffixes.append(f"grad_fn=<{self.creator.name()}>")
        elif self._requires_grad:
            suffixes.append("requires_grad=True")
        return printing.tensor_repr(arr, suffixes)


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
