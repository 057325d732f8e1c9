"""Tensors shared with other libraries, as PyTorch shares them: `from_dlpack` (a NumPy
array, a PyTorch or JAX tensor: any object with `__dlpack__`, or a DLPack capsule) and
`frombuffer` view the same memory; a lamina tensor exports itself through `__dlpack__`,
so `torch.from_dlpack(t)` and `np.from_dlpack(t)` read it without a copy. Also
`empty_strided` and `empty_permuted`, which set a tensor's memory layout."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor

__all__ = ["empty_permuted", "empty_strided", "from_dlpack", "frombuffer"]


class _Capsule:
    """A bare DLPack capsule (what `to_dlpack` gives) as NumPy's importer wants it."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # the CPU


def from_dlpack(ext_tensor: Any) -> Tensor:
    """A tensor viewing the memory of `ext_tensor`, without a copy. Memory the producer
    marks read-only stays so: writing to it in place raises.

    Examples:
        >>> a = np.arange(3.0)
        >>> t = lm.from_dlpack(a)
        >>> a[0] = 5.0; t
        tensor([5., 1., 2.], dtype=lamina.float64)
    """
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if not hasattr(ext_tensor, "__dlpack__"):
        ext_tensor = _Capsule(ext_tensor)
    try:
        return Tensor(np.from_dlpack(ext_tensor))
    except (BufferError, RuntimeError, TypeError) as e:
        raise RuntimeError(f"from_dlpack: cannot read {type(ext_tensor).__name__} ({e}); "
                           "lamina reads CPU memory only") from None


def to_dlpack(tensor: Tensor) -> Any:
    """A DLPack capsule of `tensor`'s memory, for a library that takes capsules.

    Examples:
        >>> t = lm.arange(3)
        >>> bool((lm.from_dlpack(lm.to_dlpack(t)) == t).all())
        True
    """
    return np.ascontiguousarray(tensor.detach().numpy()).__dlpack__()


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor viewing an object that exposes the buffer protocol (bytes, bytearray,
    array.array, memoryview), as PyTorch's: a read-only buffer warns, as PyTorch's does.

    Examples:
        >>> lm.frombuffer(bytearray([1, 0, 0, 0, 2, 0, 0, 0]), dtype=lm.int32)
        tensor([1, 2], dtype=lamina.int32)
    """
    view = memoryview(buffer)
    if view.readonly:
        warnings.warn("frombuffer: the given buffer is not writable; writing to the tensor "
                      "would fail (copy the data first, or pass a bytearray)", UserWarning,
                      stacklevel=2)
    array = np.frombuffer(buffer, dtype=dtypes.resolve(dtype), count=count, offset=offset)
    return Tensor(array, requires_grad=requires_grad)


def empty_strided(size: Any, stride: Any, *, dtype: Any = None, device: Any = None,
                  requires_grad: bool = False, layout: Any = None,
                  pin_memory: bool = False) -> Tensor:
    """A tensor of `size` whose elements step by `stride` (in elements) through its
    memory; its values are zeros here.

    Examples:
        >>> lm.empty_strided((2, 3), (1, 2)).stride()
        (1, 2)
    """
    d = dtypes.resolve(dtype) if dtype is not None else dtypes.get_default_dtype()
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride) or any(s < 0 for s in stride):
        raise RuntimeError(f"empty_strided: size {size} and stride {stride} must have the "
                           "same length, strides >= 0")
    extent = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = np.zeros(extent, d)
    view = np.lib.stride_tricks.as_strided(base, size, tuple(s * d.itemsize for s in stride))
    return Tensor(view, requires_grad=requires_grad)


def empty_permuted(size: Any, physical_layout: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: bool = False, layout: Any = None,
                   pin_memory: bool = False) -> Tensor:
    """A tensor of `size` laid out in memory in the dim order `physical_layout` (outermost
    first), as `empty(...).permute(...)` would give.

    Examples:
        >>> lm.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
        (12, 1, 3)
    """
    size, order = tuple(size), tuple(physical_layout)
    if sorted(order) != list(range(len(size))):
        raise RuntimeError(f"empty_permuted: physical_layout {order} must order the dims of "
                           f"{size}")
    d = dtypes.resolve(dtype) if dtype is not None else dtypes.get_default_dtype()
    base = np.zeros(tuple(size[i] for i in order), d)
    return Tensor(np.transpose(base, np.argsort(order)), requires_grad=requires_grad)
