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

__all__ = ["BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
           "HalfTensor", "IntTensor", "LongTensor", "ShortTensor"]
