"""Tensor creation with PyTorch's signatures: zeros, ones, full, eye, arange, linspace,
the *_like forms, as_tensor, from_numpy. Random tensors are in lamina.creation_random.

Sizes come as `zeros(2, 3)` or `zeros((2, 3))`; `dtype=`, `device=` and `requires_grad=`
are keywords. Floating-point results take the default dtype (float32).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina import dtypes, promotion
from lamina.autograd.tensor import Tensor


def size_of(size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s < 0:
            raise TypeError(f"size: expected non-negative ints, as zeros(2, 3) or zeros((2, 3));"
                            f" got {size}")
    return tuple(int(s) for s in size)


def new_leaf(arr: np.ndarray, device: Any, requires_grad: bool) -> Tensor:
    dtypes.check_device(device)
    return Tensor(arr, requires_grad=requires_grad)


def float_dtype(dtype: Any) -> np.dtype:
    return dtypes.resolve(dtype) or dtypes.get_default_dtype()


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A tensor of zeros.

    Examples:
        >>> lm.zeros(2, 3).shape
        lamina.Size([2, 3])
    """
    return new_leaf(np.zeros(size_of(size), float_dtype(dtype)), device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         out: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A tensor of ones.

    Examples:
        >>> lm.ones(2, dtype=lm.int64)
        tensor([1, 1])
    """
    return new_leaf(np.ones(size_of(size), float_dtype(dtype)), device, requires_grad)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None, layout: Any = None, pin_memory: bool = False,
          memory_format: Any = None) -> Tensor:
    """A tensor whose values are not set (zeros here, so runs repeat).

    Examples:
        >>> lm.empty(2, 3).shape
        lamina.Size([2, 3])
    """
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None, layout: Any = None) -> Tensor:
    """A tensor filled with `fill_value`; its dtype follows the value (a float gives the
    default dtype, an int int64, a bool bool) unless `dtype` says otherwise.

    Examples:
        >>> lm.full((2,), 7)
        tensor([7, 7])
    """
    d = dtypes.resolve(dtype) or promotion.result_type(fill_value, fill_value)
    with np.errstate(over="ignore", invalid="ignore"):  # out of d's range: inf, as PyTorch
        filled = np.full(size_of((size,)), fill_value, d)
    return new_leaf(filled, device, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """An n x m matrix with ones on the diagonal.

    Examples:
        >>> lm.eye(2)
        tensor([[1., 0.],
                [0., 1.]])
    """
    return new_leaf(np.eye(n, m, dtype=float_dtype(dtype)), device, requires_grad)


def arange(start: Any, end: Any = None, step: Any = 1, *, dtype: Any = None,
           device: Any = None, requires_grad: bool = False, out: Any = None) -> Tensor:
    """Values from start (0 if only one bound is given) up to, not including, end.

    Integers give int64; any float bound or step gives the default float dtype.

    Examples:
        >>> lm.arange(5)
        tensor([0, 1, 2, 3, 4])
    """
    if end is None:
        start, end = 0, start
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("arange: step must be nonzero")
    is_int = all(isinstance(v, (int, np.integer)) for v in (start, end, step))
    d = dtypes.resolve(dtype) or (dtypes.int64 if is_int else dtypes.get_default_dtype())
    n = max(math.ceil((end - start) / step), 0)
    values = start + np.arange(n, dtype=np.float64 if not is_int else np.int64) * step
    return new_leaf(values.astype(d), device, requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, out: Any = None) -> Tensor:
    """`steps` evenly spaced values from start to end, both included.

    Examples:
        >>> lm.linspace(0, 1, 3)
        tensor([0.0000, 0.5000, 1.0000])
    """
    return new_leaf(np.linspace(start, end, steps).astype(float_dtype(dtype)), device,
                requires_grad)


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """base ** linspace(start, end, steps).

    Examples:
        >>> lm.logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    return new_leaf(np.logspace(start, end, steps, base=base).astype(float_dtype(dtype)), device,
                requires_grad)


def like_shape(x: Tensor, dtype: Any) -> tuple[tuple[int, ...], np.dtype]:
    return tuple(x.shape), dtypes.resolve(dtype) or x.dtype


def zeros_like(x: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Zeros of x's shape and dtype.

    Examples:
        >>> lm.zeros_like(lm.tensor([1, 2]))
        tensor([0, 0])
    """
    shape, d = like_shape(x, dtype)
    return new_leaf(np.zeros(shape, d), device, requires_grad)


def ones_like(x: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Ones of x's shape and dtype.

    Examples:
        >>> lm.ones_like(lm.zeros(2))
        tensor([1., 1.])
    """
    shape, d = like_shape(x, dtype)
    return new_leaf(np.ones(shape, d), device, requires_grad)


def empty_like(x: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """A tensor of x's shape and dtype (zeros here).

    Examples:
        >>> lm.empty_like(lm.zeros(2, 3)).shape
        lamina.Size([2, 3])
    """
    return zeros_like(x, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(x: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """`fill_value` in x's shape and dtype.

    Examples:
        >>> lm.full_like(lm.zeros(2), 0.5)
        tensor([0.5000, 0.5000])
    """
    shape, d = like_shape(x, dtype)
    return new_leaf(np.full(shape, fill_value, d), device, requires_grad)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor sharing `data`'s memory when it is an array (or tensor) of the asked dtype,
    a copy otherwise.

    Examples:
        >>> a = np.zeros(2)
        >>> t = lm.as_tensor(a); t[0] = 1.0; a
        array([1., 0.])
    """
    dtypes.check_device(device)
    d = dtypes.resolve(dtype)
    if isinstance(data, Tensor):
        return data if d is None or data.dtype == d else data.to(d)
    if isinstance(data, np.ndarray):
        dtypes.check_kind(data.dtype)
        return Tensor(data if d is None or data.dtype == d else data.astype(d))
    return Tensor(dtypes.as_array(data, d))


def from_numpy(arr: np.ndarray) -> Tensor:
    """A tensor sharing the NumPy array's memory and dtype: writes show through both ways.

    Examples:
        >>> a = np.zeros(2)
        >>> t = lm.from_numpy(a); a[1] = 5; t
        tensor([0., 5.], dtype=lamina.float64)
    """
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(arr).__name__})")
    dtypes.check_kind(arr.dtype)
    return Tensor(arr)
