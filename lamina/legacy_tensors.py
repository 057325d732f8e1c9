"""PyTorch's legacy typed constructors, still in many scripts: `torch.FloatTensor(data)`,
`torch.LongTensor(2, 3)`, `x.type(torch.FloatTensor)`, `isinstance(x, torch.LongTensor)`.
Each is a class whose call makes a Tensor of its dtype (from data, or uninitialised of
the given sizes) and whose isinstance checks the dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor, tensor


class _LegacyType(type):
    dtype: np.dtype

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __call__(cls, *args: Any) -> Tensor:  # type: ignore[override]
        from lamina.creation import empty

        sizes = args[0] if len(args) == 1 and isinstance(args[0], dtypes.Size) else args
        if all(isinstance(a, (int, np.integer)) for a in sizes):
            return empty(*sizes, dtype=cls.dtype)
        if len(args) != 1:
            raise TypeError(f"{cls.__name__}(): give sizes (ints) or one sequence of data; "
                            f"got {args!r}")
        return tensor(args[0], dtype=cls.dtype)


def _legacy(name: str, dtype: np.dtype) -> type:
    example = ("[1.0, 2.0]" if dtype.kind == "f" else "[1, 0]")
    doc = (f"A {dtype} tensor from data, or uninitialised of the given sizes (PyTorch's "
           f"legacy constructor).\n\nExample:\n    >>> lm.{name}({example}).dtype\n"
           f"    dtype('{dtype}')")
    return _LegacyType(name, (), {"dtype": dtype, "__doc__": doc, "__module__": "lamina"})


FloatTensor = _legacy("FloatTensor", dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", dtypes.float64)
HalfTensor = _legacy("HalfTensor", dtypes.float16)
LongTensor = _legacy("LongTensor", dtypes.int64)
IntTensor = _legacy("IntTensor", dtypes.int32)
ShortTensor = _legacy("ShortTensor", dtypes.int16)
CharTensor = _legacy("CharTensor", dtypes.int8)
ByteTensor = _legacy("ByteTensor", dtypes.uint8)
BoolTensor = _legacy("BoolTensor", dtypes.bool)



def set_default_tensor_type(t: Any) -> None:
    """PyTorch's older `set_default_dtype`: `t` a legacy type (`lm.DoubleTensor`) or its
    name ("torch.DoubleTensor"). Deprecated, with PyTorch's warning.

    Examples:
        >>> lm.set_default_tensor_type(lm.DoubleTensor); lm.tensor([1.0]).dtype
        dtype('float64')
        >>> lm.set_default_tensor_type("torch.FloatTensor"); lm.tensor([1.0]).dtype
        dtype('float32')
    """
    import warnings

    warnings.warn("set_default_tensor_type() is deprecated, as PyTorch's is since 2.1; "
                  "use set_default_dtype()", UserWarning, stacklevel=2)
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module not in ("torch", "lamina") or not isinstance(globals().get(name),
                                                                  _LegacyType):
            raise TypeError(f"set_default_tensor_type: type {t} not available (lamina "
                            "computes on the CPU: use 'torch.FloatTensor' or "
                            "'torch.DoubleTensor')")
        t = globals()[name]
    if not isinstance(t, _LegacyType):
        raise TypeError(f"set_default_tensor_type: expected a tensor type such as "
                        f"lamina.DoubleTensor or its name; got {t!r}")
    if t.dtype.kind != "f":
        raise TypeError("set_default_tensor_type: only floating-point types are supported "
                        f"as the default type; got {t.__name__}")
    dtypes.set_default_dtype(t.dtype)


__all__ = ["BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
           "HalfTensor", "IntTensor", "LongTensor", "ShortTensor", "set_default_tensor_type"]
