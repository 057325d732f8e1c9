"""Tensor methods that convert: dtype, device, copies and `new_*`. To Python values and
NumPy arrays: lamina.functions.tensor_methods.to_python; in-place ops: .inplace."""

from __future__ import annotations

from typing import Any


def _cast(name: str, dtype: str) -> Any:
    def method(self: Any, memory_format: Any = None) -> Any:
        return self.to(dtype)
    method.__name__ = name
    method.__doc__ = (f"This tensor as {dtype} (itself when it is already).\n\nExample:\n"
                      f"    >>> lm.tensor([1.5, 0.0]).{name}().dtype\n"
                      f"    dtype('{dtype}')")
    return method


class ConvertMethods:
    """to, float, long, type, clone, new_zeros, ..."""

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
    cfloat, cdouble = _cast("cfloat", "complex64"), _cast("cdouble", "complex128")

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

    def bfloat16(self, memory_format: Any = None) -> Any:
        """Raises: NumPy has no bfloat16 (lamina.bfloat16's note).

        Examples:
            >>> lm.zeros(1).bfloat16()  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            TypeError: dtype: lamina.bfloat16: NumPy, which lamina computes with, has no ...
        """
        from lamina import dtypes

        return self.to(dtypes.bfloat16)

    def to_dense(self, dtype: Any = None, *, masked_grad: Any = None) -> Any:
        """This tensor (in `dtype`): lamina's tensors are dense already.

        Examples:
            >>> x = lm.ones(2); x.to_dense() is x
            True
        """
        return self if dtype is None else self.to(dtype)

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
