"""`Tensor`: an array, its gradient and the Function that made it, with PyTorch's surface.

The core lives here: construction, `.data` / `.grad` / `.array`, version counters, the
autograd entry points and the operators. The rest of PyTorch's method surface comes from
the mixins beside this file (shape, math, reductions, conversions), each of which hands
the work to the ops in `lamina.functions`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from lamina import config, dtypes
from lamina.autograd.tensor_convert import ConvertMethods
from lamina.autograd.tensor_math import MathMethods
from lamina.autograd.tensor_reduce import ReduceMethods
from lamina.autograd.tensor_shape import ShapeMethods
from lamina.backend import get_array_module, is_array, to_numpy


def _is_float(dtype: Any) -> bool:
    return np.dtype(dtype).kind in "fc"


class Tensor(ShapeMethods, MathMethods, ReduceMethods, ConvertMethods):
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
                 "name", "_vc", "_hooks", "_retains_grad", "__weakref__")

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
        self._vc = [0]
        self._hooks = None
        self._retains_grad = False
        self._requires_grad = False
        if requires_grad:
            self.requires_grad = True
        if config.tracer is not None:
            config.tracer.created(self)

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
        t._vc = [0]
        t._hooks = None
        t._retains_grad = False
        t._requires_grad = True
        return t

    # -- the array, .data and .grad ------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """A Tensor sharing this one's array, outside the graph and its version counter.

        Example:
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

        Example:
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

        Example:
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

        Example:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> x.grad_fn is None, (x * 2).grad_fn is not None
            (True, True)
        """
        return self.creator

    @property
    def is_leaf(self) -> bool:
        """Whether no op made this tensor (a parameter, an input, a detached value).

        Example:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> x.is_leaf, (x * 2).is_leaf
            (True, False)
        """
        return self.creator is None

    @property
    def _version(self) -> int:
        """How many in-place changes this tensor's memory has seen (shared with its views)."""
        return self._vc[0]

    @property
    def shape(self) -> dtypes.Size:
        """The sizes of the dims (a `lamina.Size`, a tuple).

        Example:
            >>> lm.zeros(2, 3).shape
            lamina.Size([2, 3])
        """
        return dtypes.Size(self.array.shape)

    @property
    def dtype(self) -> Any:
        """The element type.

        Example:
            >>> lm.zeros(2).dtype == lm.float32
            True
        """
        return self.array.dtype

    @property
    def ndim(self) -> int:
        """The number of dims.

        Example:
            >>> lm.zeros(2, 3).ndim
            2
        """
        return self.array.ndim

    @property
    def device(self) -> dtypes.device:
        """Where the tensor lives: always the CPU.

        Example:
            >>> lm.zeros(2).device
            device(type='cpu')
        """
        return dtypes.CPU

    @property
    def is_cuda(self) -> bool:
        """False: lamina computes on the CPU.

        Example:
            >>> lm.zeros(2).is_cuda
            False
        """
        return False

    def __len__(self) -> int:
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self.array)

    def __iter__(self) -> Iterator[Tensor]:
        if self.array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    # -- conversion to Python and NumPy ---------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The array as NumPy (shared, not copied, on the CPU).

        Raises:
            RuntimeError: the tensor requires grad (call `.detach().numpy()`), as PyTorch.

        Example:
            >>> lm.tensor([1, 2]).numpy()
            array([1, 2])
        """
        if self._requires_grad and not force:
            raise RuntimeError(
                "Tensor.numpy: can't call numpy() on a tensor that requires grad; use "
                "tensor.detach().numpy()"
            )
        if config.tracer is not None:
            config.tracer.converted(self, "numpy()")
        return to_numpy(self.array)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if config.tracer is not None:
            config.tracer.converted(self, "np.asarray()")
        arr = to_numpy(self.array)
        return arr.astype(dtype) if dtype is not None else arr

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number.

        Example:
            >>> lm.tensor([2.5]).item()
            2.5
        """
        if config.tracer is not None:
            config.tracer.converted(self, "item()")
        if self.array.size != 1:
            raise RuntimeError(
                f"item: a Tensor with {self.array.size} elements cannot be converted to a "
                "Python number; only one-element tensors can"
            )
        return self.array.item()

    def tolist(self) -> Any:
        """The values as (nested) Python lists of numbers.

        Example:
            >>> lm.tensor([[1, 2]]).tolist()
            [[1, 2]]
        """
        if config.tracer is not None:
            config.tracer.converted(self, "tolist()")
        return to_numpy(self.array).tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self.array.dtype.kind not in "iub" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be an index")
        return int(self.item())

    def __bool__(self) -> bool:
        if config.tracer is not None:
            config.tracer.converted(self, "bool() (an `if` or `while` on a tensor)")
        if self.array.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {self.array.size} elements is ambiguous; use "
                ".any() or .all()"
            )
        return bool(self.array)

    # -- autograd -------------------------------------------------------------------------
    def backward(self, gradient: Any = None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs: Any = None) -> None:
        """Accumulate d(self)/d(leaf) into the `.grad` of every leaf that requires grad.

        Args:
            gradient: dL/d(self), of self's shape; may be omitted only for one element.
            retain_graph: keep saved arrays so backward can run through the graph again.
            create_graph: not supported (lamina's gradients are not differentiable).
            inputs: accumulate only into these tensors' `.grad`.

        Raises:
            RuntimeError: self is not scalar and no gradient is given, or the graph was
                freed, or an array an op saved was changed in place since.

        Example:
            >>> x = lm.tensor([1.0, 2.0], requires_grad=True)
            >>> (x ** 2).sum().backward()
            >>> x.grad
            tensor([2., 4.])
        """
        from lamina.autograd.engine import backward

        backward(self, gradient, bool(retain_graph), inputs=inputs, create_graph=create_graph)

    def zero_grad(self) -> None:
        """Forget the accumulated gradient.

        Example:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> (x * 3).sum().backward(); x.zero_grad(); x.grad is None
            True
        """
        self._grad = None

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set `requires_grad` in place; returns self.

        Example:
            >>> lm.zeros(2).requires_grad_().requires_grad
            True
        """
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in `.grad` after backward.

        Example:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> h = x * 3; h.retain_grad(); (h * h).sum().backward()
            >>> h.grad
            tensor([6.])
        """
        if self.creator is None:
            return
        if not self._retains_grad:
            self._retains_grad = True
            self._add_hook(_Retain(self))

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> Any:
        """Call `hook(grad)` when this tensor's gradient is computed; a returned Tensor
        replaces the gradient. Returns a handle whose `remove()` unregisters it.

        Example:
            >>> x = lm.tensor([1.0, 2.0], requires_grad=True)
            >>> h = x.register_hook(lambda g: g * 2)   # doubles x's gradient
            >>> x.sum().backward(); x.grad
            tensor([2., 2.])
        """
        if not self._requires_grad:
            raise RuntimeError("register_hook: cannot register a hook on a tensor that "
                               "doesn't require gradient")
        return self._add_hook(hook)

    def _add_hook(self, hook: Any) -> Any:
        if self.creator is None:
            if self._hooks is None:
                self._hooks = []
            hooks = self._hooks
        else:
            table = self.creator.__dict__.setdefault("tensor_hooks", {})
            hooks = table.setdefault(self.output_index, [])
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def detach(self) -> Tensor:
        """A new leaf sharing this tensor's array and version counter, cut from the graph.

        Example:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> (x * 2).detach().requires_grad
            False
        """
        out = Tensor(self.array)
        out._vc = self._vc
        return out

    def copy(self) -> Tensor:
        """A new leaf with a copy of the array, requiring grad as this one does (lamina's
        name; PyTorch spells it `x.detach().clone()`).

        Example:
            >>> x = lm.tensor([1.0])
            >>> y = x.copy(); y.add_(1); x
            tensor([2.])
            tensor([1.])
        """
        return Tensor(self.array.copy(), requires_grad=self._requires_grad)

    def astype(self, dtype: Any) -> Tensor:
        """NumPy's name for `to(dtype)`.

        Example:
            >>> lm.tensor([1.7]).astype('int64')
            tensor([1])
        """
        return self.to(dtype)

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place; returns self.

        Example:
            >>> x = lm.tensor([1.0], requires_grad=True) * 2
            >>> x.detach_().is_leaf
            True
        """
        self.creator = None
        self.generation = 0
        self._requires_grad = False
        return self

    # -- operators (in lamina.functions.math) --------------------------------------------
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
        return _math.as_operand(other, self).div(self, rounding_mode="floor")

    def __mod__(self, other: Any) -> Tensor:
        return self.remainder(other)

    def __rmod__(self, other: Any) -> Tensor:
        return _math.as_operand(other, self).remainder(self)

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
            out._vc = self._vc  # a view: writes through it are writes to this tensor
        return out

    def __setitem__(self, key: Any, value: Any) -> None:
        from lamina.functions.indexing import setitem

        self._inplace(lambda t: setitem(t, key, value))

    # Comparisons give boolean tensors and no gradient. While a plan traces, each is an op,
    # so a mask made from the batch is made again from every batch, not frozen.
    def _compare(self, op: Any, other: Any) -> Tensor:
        if config.tracer is None:
            a, b = _math.compare_operands(self, other)
            return Tensor(op(a, b))
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

    # -- in-place writes ------------------------------------------------------------------
    def _write(self, result: Tensor) -> Tensor:
        """Make `result` (computed out of place) this tensor's value, in its own memory.

        PyTorch's in-place rules: a leaf that requires grad may not be written while grad
        mode is on; a write bumps the version counter shared with every view, so an op
        that saved this memory for backward fails loudly rather than use the new values.
        When the result is part of the graph, this tensor takes over its place there.
        """
        if config.grad_enabled and self.creator is None and self._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad is being used in an in-place operation; "
                "wrap the update in `with lamina.no_grad():` or use the out-of-place form"
            )
        arr = result.array
        if arr.shape != self.array.shape:
            raise RuntimeError(
                f"in-place op: the result of shape {tuple(arr.shape)} does not fit the "
                f"tensor's shape {tuple(self.shape)}"
            )
        if arr.dtype != self.array.dtype and not np.can_cast(arr.dtype, self.array.dtype,
                                                              "same_kind"):
            raise RuntimeError(
                f"in-place op: result type {arr.dtype} can't be cast to the desired output "
                f"type {self.array.dtype}"
            )
        if not self.array.flags.writeable:
            self.array = self.array.copy()
        np.copyto(self.array, arr, casting="unsafe")
        self._vc[0] += 1
        if config.grad_enabled and result.creator is not None:
            self.creator = result.creator
            self.generation = result.generation
            self.output_index = result.output_index
            self._requires_grad = True
        elif config.grad_enabled and self.creator is not None:
            # overwritten by constants: nothing of the old value reaches the result
            self.creator, self.generation, self._requires_grad = None, 0, False
        return self

    def _inplace(self, op: Callable[[Tensor], Tensor]) -> Tensor:
        """Apply `op` out of place and write its result into this tensor (`add_`, `x[i] = v`).

        While grad mode records, the op reads a copy that stands in this tensor's place in
        the graph, so an array the op saves for backward is never the one written over.
        """
        if not config.grad_enabled:
            return self._write(op(self))
        if self.creator is None and self._requires_grad:
            return self._write(self)  # raises: a leaf that requires grad
        stand_in = object.__new__(Tensor)
        stand_in.array = self.array.copy()
        for slot in ("creator", "generation", "output_index", "_requires_grad"):
            setattr(stand_in, slot, getattr(self, slot))
        stand_in._grad, stand_in.name, stand_in._vc = None, None, [0]
        stand_in._hooks, stand_in._retains_grad = None, False
        return self._write(op(stand_in))

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


class _Retain:
    """The hook that `retain_grad` adds: stores the gradient on the tensor it came from."""

    def __init__(self, t: Tensor) -> None:
        import weakref

        self.ref = weakref.ref(t)

    def __call__(self, grad: Tensor) -> None:
        t = self.ref()
        if t is not None:
            t._grad = grad if t._grad is None else Tensor(t._grad.array + grad.array)


class _HookHandle:
    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self.hooks, self.hook = hooks, hook

    def remove(self) -> None:
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)


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

    Example:
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
