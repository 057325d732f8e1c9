"""Tensor methods that hand the values to Python and NumPy: len, iteration, numpy(),
item(), tolist(), the number conversions, bool() and format()."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from lamina import state
from lamina.backend import to_numpy


class PythonMethods:
    """len(t), iter(t), t.numpy(), t.item(), t.tolist(), float(t), bool(t), ..."""

    __slots__ = ()

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
