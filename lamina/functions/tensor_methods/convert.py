"""Tensor methods that convert (dtype, device, copies, `new_*`) and the in-place ops
(`add_`, `fill_`, `normal_`, ...). In-place ops go through `Tensor._inplace`, which keeps
PyTorch's rules: version counters, and no writes to a leaf that requires grad."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from lamina import state
from lamina.backend import to_numpy


def _cast(name: str, dtype: str) -> Any:
    def method(self: Any, memory_format: Any = None) -> Any:
        return self.to(dtype)
    method.__name__ = name
    method.__doc__ = (f"This tensor as {dtype} (itself when it is already).\n\nExample:\n"
                      f"    >>> lm.tensor([1.5, 0.0]).{name}().dtype\n"
                      f"    dtype('{dtype}')")
    return method


def _inplace(name: str, example: str = "",
             tensor: str = "lm.tensor([[0.5, 0.75], [0.2, 0.25]])") -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self._inplace(lambda t: getattr(t, name)(*args, **kwargs))
    method.__name__ = name + "_"
    method.__doc__ = (f"`{name}({example})` written into this tensor's memory; returns self.\n\n"
                      f"Example:\n    >>> x = {tensor}\n"
                      f"    >>> x.{name}_({example}) is x\n    True")
    return method


def _zero_link(t: Any) -> Any:
    """0, or t * 0 where t is in the graph: an overwritten tensor still hands its history
    a gradient (of zeros), as PyTorch's fill_ and copy_ do."""
    return t * 0 if t.requires_grad else 0


class ConvertMethods:
    """to, float, long, type, clone, new_zeros, and the in-place ops ending in `_`."""

    __slots__ = ()

    def to(self, *args: Any, **kwargs: Any) -> Any:
        """This tensor with another dtype (and on a device, which here is the CPU): `to(dtype)`,
        `to(device)`, `to(device, dtype)`, `to(other)`; itself when nothing changes, unless
        `copy=True`.

        Examples:
            >>> lm.tensor([1, 2]).to(lm.float32)
            tensor([1., 2.])
        """
        from lamina import dtypes
        from lamina.functions.operands import astype
        from lamina.memory_formats import preserve_format

        dtype, copy = kwargs.pop("dtype", None), kwargs.pop("copy", False)
        dtypes.check_device(kwargs.pop("device", None))
        kwargs.pop("non_blocking", None)
        memory_format = kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to(): unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if hasattr(a, "array"):
                dtype = a.dtype
            elif isinstance(a, (dtypes.device, int)) or (
                    isinstance(a, str) and dtypes.resolve_name(a) is None):
                dtypes.check_device(a if not isinstance(a, int) else f"cuda:{a}")
            elif isinstance(a, bool) or a is None:
                continue
            else:
                dtype = a
        out = self if dtype is None else astype(self, dtype)
        if memory_format is not None and memory_format is not preserve_format:
            laid = out.contiguous(memory_format=memory_format)
            copy, out = copy and laid is self, laid
        return out.clone() if copy and out is self else out

    float, double, half = _cast("float", "float32"), _cast("double", "float64"), _cast(
        "half", "float16")
    long, int, short = _cast("long", "int64"), _cast("int", "int32"), _cast("short", "int16")
    bool, byte, char = _cast("bool", "bool"), _cast("byte", "uint8"), _cast("char", "int8")

    def type(self, dtype: Any = None, non_blocking: Any = False) -> Any:
        """The type's name ('lamina.FloatTensor') with no argument, else `to(dtype)`
        (PyTorch's names such as 'torch.LongTensor' accepted).

        Examples:
            >>> x = lm.tensor([1.5])
            >>> x.type(), x.type('torch.LongTensor')
            ('lamina.FloatTensor', tensor([1]))
        """
        from lamina import dtypes

        if dtype is None:
            return dtypes.tensor_type_name(self.dtype)
        return self.to(dtypes.from_type_name(dtype))

    def type_as(self, other: Any) -> Any:
        """This tensor in `other`'s dtype.

        Examples:
            >>> lm.tensor([1, 2]).type_as(lm.zeros(1)).dtype
            dtype('float32')
        """
        return self.to(other.dtype)

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating-point one.

        Examples:
            >>> lm.zeros(1).is_floating_point(), lm.tensor([1]).is_floating_point()
            (True, False)
        """
        return self.array.dtype.kind == "f"

    def is_complex(self) -> bool:
        """False: lamina's tensors hold no complex numbers.

        Examples:
            >>> lm.zeros(1).is_complex()
            False
        """
        return False

    def cpu(self, memory_format: Any = None) -> Any:
        """This tensor (lamina's tensors live on the CPU).

        Examples:
            >>> lm.zeros(1).cpu().device
            device(type='cpu')
        """
        return self

    def cuda(self, device: Any = None, non_blocking: bool = False) -> Any:
        """Raises: lamina computes on the CPU here.

        Examples:
            >>> lm.zeros(1).cuda()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            RuntimeError: device 'cuda': ...
        """
        from lamina import dtypes

        dtypes.check_device("cuda")

    def pin_memory(self, device: Any = None) -> Any:
        """Raises, as PyTorch's does on a machine with no accelerator: pinned memory is
        for copies to one. `is_pinned()` is False.

        Examples:
            >>> lm.zeros(1).pin_memory()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            RuntimeError: Cannot access accelerator device when none is available...
        """
        raise RuntimeError("Cannot access accelerator device when none is available. "
                           "(lamina computes on the CPU; a batch needs no pinning)")

    def is_pinned(self, device: Any = None) -> bool:
        """False: nothing is pinned here (see pin_memory).

        Examples:
            >>> lm.zeros(1).is_pinned()
            False
        """
        return False

    def get_device(self) -> int:
        """-1, PyTorch's number for the CPU.

        Examples:
            >>> lm.zeros(1).get_device()
            -1
        """
        return -1

    def clone(self, *, memory_format: Any = None) -> Any:
        """A copy with its own memory, laid out as this tensor (PyTorch's default,
        `lm.preserve_format`) or in `memory_format`'s order; gradients flow back to this
        tensor.

        Examples:
            >>> x = lm.tensor([1.0], requires_grad=True)
            >>> y = x.clone(); y.sum().backward(); x.grad
            tensor([1.])
        """
        from lamina.functions.operands import AsType
        from lamina.memory_formats import order, preserve_format, relaid

        if memory_format is None or memory_format is preserve_format:
            return AsType(self.dtype, order="K").apply(self)
        dims = order(memory_format, self.ndim, "clone")
        row_major = AsType(self.dtype, order="C").apply
        return row_major(self) if dims is None else relaid(self, dims, row_major)

    def new_tensor(self, data: Any, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False) -> Any:
        """A new leaf from data, in this tensor's dtype unless given.

        Examples:
            >>> lm.zeros(1, dtype=lm.float64).new_tensor([1, 2])
            tensor([1., 2.], dtype=lamina.float64)
        """
        from lamina.autograd.tensor import tensor

        return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Any:
        """Zeros of `size`, in this tensor's dtype unless given.

        Examples:
            >>> lm.zeros(1, dtype=lm.float64).new_zeros(2)
            tensor([0., 0.], dtype=lamina.float64)
        """
        from lamina.creation import zeros

        return zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Any:
        """Ones of `size`, in this tensor's dtype unless given.

        Examples:
            >>> lm.tensor([1]).new_ones(2)
            tensor([1, 1])
        """
        from lamina.creation import ones

        return ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Any:
        """`fill_value` in `size`, in this tensor's dtype unless given.

        Examples:
            >>> lm.zeros(1).new_full((2,), 7.0)
            tensor([7., 7.])
        """
        from lamina.creation import full

        return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False) -> Any:
        """A tensor of `size` (zeros), in this tensor's dtype unless given.

        Examples:
            >>> lm.zeros(1).new_empty(2, 3).shape
            lamina.Size([2, 3])
        """
        return self.new_zeros(*size, dtype=dtype, requires_grad=requires_grad)

    # -- to Python and NumPy ----------------------------------------------------------------
    def __len__(self) -> int:
        if self.array.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self.array)

    def __iter__(self) -> Iterator[Any]:
        if self.array.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))


    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The array as NumPy (shared, not copied, on the CPU).

        Raises:
            RuntimeError: the tensor requires grad (call `.detach().numpy()`), as PyTorch.

        Examples:
            >>> lm.tensor([1, 2]).numpy()
            array([1, 2])
        """
        if self._requires_grad and not force:
            raise RuntimeError(
                "Tensor.numpy: can't call numpy() on a tensor that requires grad; use "
                "tensor.detach().numpy()"
            )
        if state.tracer is not None:
            state.tracer.converted(self, "numpy()")
        return to_numpy(self.array)

    def __dlpack__(self, **kwargs: Any) -> Any:
        """This tensor's memory as a DLPack capsule, for `torch.from_dlpack(t)` or
        `np.from_dlpack(t)` (a detached view: no gradient crosses)."""
        return np.ascontiguousarray(to_numpy(self.array)).__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # DLPack's CPU

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if state.tracer is not None:
            state.tracer.converted(self, "np.asarray()")
        arr = to_numpy(self.array)
        return arr.astype(dtype) if dtype is not None else arr

    def item(self) -> Any:
        """The value of a one-element tensor as a Python number.

        Examples:
            >>> lm.tensor([2.5]).item()
            2.5
        """
        if state.tracer is not None:
            state.tracer.converted(self, "item()")
        if self.array.size != 1:
            raise RuntimeError(
                f"item: a Tensor with {self.array.size} elements cannot be converted to a "
                "Python number; only one-element tensors can"
            )
        return self.array.item()

    def tolist(self) -> Any:
        """The values as (nested) Python lists of numbers.

        Examples:
            >>> lm.tensor([[1, 2]]).tolist()
            [[1, 2]]
        """
        if state.tracer is not None:
            state.tracer.converted(self, "tolist()")
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
        if state.tracer is not None:
            state.tracer.converted(self, "bool() (an `if` or `while` on a tensor)")
        if self.array.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {self.array.size} elements is ambiguous; use "
                ".any() or .all()"
            )
        return bool(self.array)

    def __format__(self, spec: str) -> str:
        """A 0-d tensor formats as its number (`f"{loss:.4f}"`), as PyTorch's; any other
        takes no format spec."""
        if self.array.ndim == 0:
            return format(self.item(), spec)
        return object.__format__(self, spec)

    # -- operators (in lamina.functions.math) --------------------------------------------

    # -- in place ------------------------------------------------------------------------
    def zero_(self) -> Any:
        """Fill with zeros, in place.

        Examples:
            >>> lm.ones(2).zero_()
            tensor([0., 0.])
        """
        return self.fill_(0)

    def fill_(self, value: Any) -> Any:
        """Fill with `value` (a number or 0-d tensor), in place.

        Examples:
            >>> lm.zeros(2).fill_(3.0)
            tensor([3., 3.])
        """
        if hasattr(value, "array"):  # a 0-d tensor: its gradient is the sum of ours
            return self.copy_(value)
        return self._write_constant(np.full(self.shape, value))

    def copy_(self, src: Any, non_blocking: bool = False) -> Any:
        """Copy src's values (broadcast, cast) into this tensor; gradients flow to src.

        Examples:
            >>> lm.zeros(2, 2).copy_(lm.tensor([1.0, 2.0]))
            tensor([[1., 2.],
                    [1., 2.]])
        """
        from lamina.functions.operands import cast

        def copied(t: Any) -> Any:
            s = src if hasattr(src, "array") else type(t)(np.asarray(src))
            return cast(s, t.dtype).expand(tuple(t.shape)) + _zero_link(t)
        return self._inplace(copied)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Any:
        """Fill with normal draws, in place.

        Examples:
            >>> lm.empty(3).normal_(0, 1).shape
            lamina.Size([3])
        """
        from lamina.random import numpy_rng

        draws = numpy_rng(generator).standard_normal(self.shape) * std + mean
        return self._write_constant(draws)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Any:
        """Fill with uniform draws from [a, b), in place.

        Examples:
            >>> bool((lm.empty(3).uniform_(0, 1) < 1).all())
            True
        """
        from lamina.random import numpy_rng

        return self._write_constant(numpy_rng(generator).uniform(a, b, self.shape))

    def bernoulli_(self, p: float = 0.5, *, generator: Any = None) -> Any:
        """Fill with 1 (probability p) or 0, in place.

        Examples:
            >>> lm.empty(3).bernoulli_(0.5).shape
            lamina.Size([3])
        """
        from lamina.random import numpy_rng

        return self._write_constant(numpy_rng(generator).random(self.shape) < p)

    def _write_constant(self, values: Any) -> Any:
        return self._inplace(lambda t: type(t)(np.asarray(values, t.dtype)) + _zero_link(t))

    add_, sub_, mul_, div_ = (_inplace(n, "2") for n in ("add", "sub", "mul", "div"))
    pow_, fmod_, remainder_ = (_inplace(n, "2") for n in ("pow", "fmod", "remainder"))
    clamp_, clip_ = _inplace("clamp", "0.3, 0.6"), _inplace("clip", "0.3, 0.6")
    neg_, abs_, exp_, log_, sqrt_ = (_inplace(n) for n in ("neg", "abs", "exp", "log", "sqrt"))
    sigmoid_, tanh_, relu_ = (_inplace(n) for n in ("sigmoid", "tanh", "relu"))
    floor_, ceil_, round_, trunc_ = (_inplace(n) for n in ("floor", "ceil", "round", "trunc"))
    masked_fill_ = _inplace("masked_fill", "x > 0.3, 0.0")
    index_fill_ = _inplace("index_fill", "1, lm.tensor([0]), 0.0")
    index_add_ = _inplace("index_add", "0, lm.tensor([1]), x[:1]")
    scatter_ = _inplace("scatter", "1, lm.tensor([[1], [0]]), 9.0")
    scatter_add_ = _inplace("scatter_add", "1, lm.tensor([[1], [0]]), x[:, :1]")
    lerp_ = _inplace("lerp", "x.flip(0), 0.5")
    addmm_, square_, reciprocal_ = (_inplace("addmm", "x, x"), _inplace("square"),
                                    _inplace("reciprocal"))
    tril_, triu_ = _inplace("tril"), _inplace("triu")
