"""dtypes, `Size` and `device`; PyTorch's type promotion is lamina.promotion's.

lamina's dtypes are NumPy's (`lamina.float32 is np.dtype("float32")`), so `x.dtype ==
lamina.float32` holds and arrays pass between the two libraries as they are. What PyTorch
adds lives here: its dtype names and aliases, the default float dtype, `Size`, `device`
and the conversion of data to arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import state

float16 = half = np.dtype(np.float16)
float32 = float = np.dtype(np.float32)  # noqa: A001 - PyTorch's alias
float64 = double = np.dtype(np.float64)
uint8 = np.dtype(np.uint8)
int8 = np.dtype(np.int8)
int16 = short = np.dtype(np.int16)
int32 = int = np.dtype(np.int32)  # noqa: A001 - PyTorch's alias
int64 = long = np.dtype(np.int64)
bool = np.dtype(np.bool_)  # noqa: A001 - PyTorch's name
complex64 = cfloat = np.dtype(np.complex64)
complex128 = cdouble = np.dtype(np.complex128)
# torch.dtype: `isinstance(x.dtype, lamina.dtype)` and annotations `dtype: torch.dtype` work
dtype = np.dtype


class Unsupported:
    """A PyTorch dtype NumPy has not got. Its name exists, so that a script naming it
    (`autocast(dtype=torch.bfloat16)`, a table of dtypes) runs; making a tensor of it
    raises, naming the fix."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"lamina.{self.name}"

    def refuse(self) -> TypeError:
        return TypeError(f"dtype: lamina.{self.name}: NumPy, which lamina computes with, "
                         f"has no {self.name}; use lamina.float32 (autocast with "
                         f"dtype={self.name} runs its block in full precision)")


bfloat16 = Unsupported("bfloat16")
complex32 = chalf = Unsupported("complex32")


class layout:  # noqa: N801 - PyTorch's name
    """How a tensor's elements lie in memory (torch.layout). lamina's are all `strided`:
    dense arrays with a stride per dim.

    Examples:
        >>> lm.zeros(2).layout == lm.strided
        True
    """

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"lamina.{self.name}"


strided = layout("strided")

_PYTHON = {"float": float64, "int": int64, "bool": bool, "complex": complex128}
_NAMES = {"float": float32, "double": float64, "half": float16, "long": int64, "int": int32,
          "short": int16, "bool": bool, "cfloat": complex64, "cdouble": complex128}


class Size(tuple):
    """A tensor's shape (torch.Size): a tuple of ints with `numel()`.

    Examples:
        >>> s = lm.zeros(2, 3).shape
        >>> s, s.numel(), s[1]
        (lamina.Size([2, 3]), 6, 3)
    """

    def numel(self) -> Any:
        """The number of elements a tensor of this shape holds."""
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"lamina.Size({list(self)})"

    __str__ = __repr__  # print(x.shape) reads lamina.Size([2, 3]), as PyTorch's


class device:  # noqa: N801 - PyTorch's name
    """Where a tensor lives. lamina computes with NumPy, so every tensor is on the CPU.

    Examples:
        >>> lm.device("cpu") == lm.zeros(2).device
        True
    """

    def __init__(self, type: Any = "cpu", index: Any = None) -> None:  # noqa: A002
        name = type.type if isinstance(type, device) else str(type).split(":")[0]
        if name != "cpu":
            check_device(name)
        self.type, self.index = "cpu", None

    def __eq__(self, other: Any) -> Any:
        if isinstance(other, str):
            return other.split(":")[0] == self.type
        return isinstance(other, device) and other.type == self.type

    def __hash__(self) -> Any:
        return hash(self.type)

    def __str__(self) -> str:
        return self.type

    def __repr__(self) -> str:
        return f"device(type='{self.type}')"


CPU = device("cpu")


def check_device(dev: Any) -> None:
    """Refuse a device lamina has not got, with the reason; None and the CPU pass."""
    if dev is None or isinstance(dev, device):
        return
    name = str(dev).split(":")[0]
    if name != "cpu":
        raise RuntimeError(
            f"device {dev!r}: lamina computes with NumPy on the CPU, and this machine has no "
            f"{name} device lamina can use; use 'cpu' (lamina.cuda.is_available() is False)"
        )


def get_default_dtype() -> np.dtype:
    """The dtype of tensors made from Python floats (float32 unless changed).

    Examples:
        >>> lm.get_default_dtype()
        dtype('float32')
    """
    return state.default_dtype


def set_default_dtype(d: Any) -> None:
    """Make `d` (float32 or float64) the dtype of new floating-point tensors.

    Examples:
        >>> lm.set_default_dtype(lm.float64); lm.tensor([1.0]).dtype
        dtype('float64')
    """
    d = resolve(d)
    if d is None or d.kind != "f":
        raise TypeError(f"set_default_dtype: only floating-point types are supported as the "
                        f"default type; got {d}")
    state.default_dtype = d


def resolve(d: Any) -> np.dtype | None:
    """A dtype given as lamina/NumPy dtype, a name ("float32", "torch.long") or a Python
    type (float means float64, as in PyTorch), as a NumPy dtype; None stays None."""
    if d is None or isinstance(d, np.dtype):
        return d
    if isinstance(d, Unsupported):
        raise d.refuse()
    if isinstance(d, type) and d.__name__ in _PYTHON and d.__module__ == "builtins":
        return _PYTHON[d.__name__]
    if isinstance(d, str):
        name = d.removeprefix("torch.").removeprefix("lamina.")
        if name in _NAMES:
            return _NAMES[name]
        if name in (bfloat16.name, complex32.name, "chalf"):
            raise (bfloat16 if name == bfloat16.name else complex32).refuse()
        d = name
    try:
        out = np.dtype(d)
    except TypeError:
        raise TypeError(f"dtype: {d!r} is not a dtype lamina knows; use lamina.float32, "
                        "lamina.int64, ...") from None
    check_kind(out)
    return out


_TYPE_NAMES = {"FloatTensor": float32, "DoubleTensor": float64, "HalfTensor": float16,
               "LongTensor": int64, "IntTensor": int32, "ShortTensor": int16,
               "CharTensor": int8, "ByteTensor": uint8, "BoolTensor": bool}


def tensor_type_name(d: np.dtype) -> str:
    """PyTorch's legacy type name of a dtype, under lamina's name: 'lamina.FloatTensor'."""
    return "lamina." + next(k for k, v in _TYPE_NAMES.items() if v == d)


def from_type_name(t: Any) -> np.dtype:
    """A dtype from a legacy type name ('torch.LongTensor') or anything `resolve` takes."""
    if isinstance(t, type) and t.__name__ in _TYPE_NAMES and hasattr(t, "dtype"):
        return _TYPE_NAMES[t.__name__]  # lamina.FloatTensor, the class
    if isinstance(t, str) and t.endswith("Tensor"):
        name = t.rsplit(".", 1)[-1]
        if name not in _TYPE_NAMES:
            raise TypeError(f"type(): invalid type {t!r}")
        return _TYPE_NAMES[name]
    return resolve(t)


def resolve_name(name: str) -> np.dtype | None:
    """The dtype a string names, or None when it names none (a device, say)."""
    try:
        return resolve(name)
    except TypeError:
        return None


def check_kind(d: np.dtype) -> None:
    """Refuse dtypes a tensor cannot hold: strings, objects, complex256. A complex dtype
    passes, and from then on every op checks whether it can take complex operands
    (state.complex_seen)."""
    if d.kind == "c" and d.itemsize <= 16:
        state.complex_seen = True
    elif d.kind not in "biuf":
        raise TypeError(
            f"tensor: dtype {d} is not supported; lamina's tensors hold bool, integer, "
            "floating-point or complex numbers (convert strings or objects first)"
        )


def default_complex() -> np.dtype:
    """The complex dtype of Python complex numbers: complex64 beside a float32 default."""
    return complex128 if state.default_dtype == float64 else complex64


def as_array(data: Any, dtype: np.dtype | None = None, copy: Any = None) -> np.ndarray:
    """`data` (numbers, nested lists, NumPy scalars, tensors in lists) as an array, with
    PyTorch's inference: Python floats take the default dtype, ints int64, bools bool."""
    if isinstance(data, (list, tuple)) and data and _holds_tensors(data):
        data = _unwrap(data)
    # A value out of the dtype's range casts without a warning, as in PyTorch (to inf for
    # a float: lm.tensor([1e6], dtype=lm.float16)).
    with np.errstate(over="ignore", invalid="ignore"):
        if isinstance(data, np.generic):
            arr = np.array(data, dtype=dtype)
        else:
            arr = np.array(data, dtype=dtype, copy=True if copy else None)
            if dtype is None and arr.dtype.kind == "f" and not _holds_arrays(data):
                arr = arr.astype(get_default_dtype(), copy=False)
            elif dtype is None and arr.dtype.kind in "iu" and not _holds_arrays(data):
                arr = arr.astype(np.int64, copy=False)
            elif dtype is None and arr.dtype.kind == "c" and not _holds_arrays(data):
                arr = arr.astype(default_complex(), copy=False)
    check_kind(arr.dtype)
    return arr


def _holds_tensors(seq: Any) -> Any:
    first = seq[0]
    return hasattr(first, "array") or (isinstance(first, (list, tuple)) and first
                                         and _holds_tensors(first))


def _holds_arrays(data: Any) -> Any:
    return isinstance(data, (np.ndarray, np.generic)) or (
        isinstance(data, (list, tuple)) and data and _holds_arrays(data[0]))


def _unwrap(seq: Any) -> Any:
    return [_unwrap(v) if isinstance(v, (list, tuple)) else getattr(v, "array", v)
            for v in seq]
