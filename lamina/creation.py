"""Tensor creation with PyTorch's signatures: zeros, ones, full, arange, rand, randn, ...

Sizes come as `zeros(2, 3)` or `zeros((2, 3))`; `dtype=`, `device=` and `requires_grad=`
are keywords. Floating-point results take the default dtype (float32); random draws come
from the default generator or `generator=`, so `lamina.manual_seed` repeats them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor
from lamina.random import numpy_rng


def _size(size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s < 0:
            raise TypeError(f"size: expected non-negative ints, as zeros(2, 3) or zeros((2, 3));"
                            f" got {size}")
    return tuple(int(s) for s in size)


def _new(arr: np.ndarray, device: Any, requires_grad: bool) -> Tensor:
    dtypes.check_device(device)
    return Tensor(arr, requires_grad=requires_grad)


def _float(dtype: Any) -> np.dtype:
    return dtypes.resolve(dtype) or dtypes.get_default_dtype()


def zeros(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
          out: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A tensor of zeros.

    Examples:
        >>> lm.zeros(2, 3).shape
        lamina.Size([2, 3])
    """
    return _new(np.zeros(_size(size), _float(dtype)), device, requires_grad)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         out: Any = None, layout: Any = None, pin_memory: bool = False) -> Tensor:
    """A tensor of ones.

    Examples:
        >>> lm.ones(2, dtype=lm.int64)
        tensor([1, 1])
    """
    return _new(np.ones(_size(size), _float(dtype)), device, requires_grad)


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
    d = dtypes.resolve(dtype) or dtypes.result_type(fill_value, fill_value)
    return _new(np.full(_size((size,)), fill_value, d), device, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """An n x m matrix with ones on the diagonal.

    Examples:
        >>> lm.eye(2)
        tensor([[1., 0.],
                [0., 1.]])
    """
    return _new(np.eye(n, m, dtype=_float(dtype)), device, requires_grad)


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
    return _new(values.astype(d), device, requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, out: Any = None) -> Tensor:
    """`steps` evenly spaced values from start to end, both included.

    Examples:
        >>> lm.linspace(0, 1, 3)
        tensor([0.0000, 0.5000, 1.0000])
    """
    return _new(np.linspace(start, end, steps).astype(_float(dtype)), device,
                requires_grad)


def logspace(start: float, end: float, steps: int, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """base ** linspace(start, end, steps).

    Examples:
        >>> lm.logspace(0, 2, 3)
        tensor([  1.,  10., 100.])
    """
    return _new(np.logspace(start, end, steps, base=base).astype(_float(dtype)), device,
                requires_grad)


def _like(x: Tensor, dtype: Any) -> tuple[tuple[int, ...], np.dtype]:
    return tuple(x.shape), dtypes.resolve(dtype) or x.dtype


def zeros_like(x: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Zeros of x's shape and dtype.

    Examples:
        >>> lm.zeros_like(lm.tensor([1, 2]))
        tensor([0, 0])
    """
    shape, d = _like(x, dtype)
    return _new(np.zeros(shape, d), device, requires_grad)


def ones_like(x: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Ones of x's shape and dtype.

    Examples:
        >>> lm.ones_like(lm.zeros(2))
        tensor([1., 1.])
    """
    shape, d = _like(x, dtype)
    return _new(np.ones(shape, d), device, requires_grad)


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
    shape, d = _like(x, dtype)
    return _new(np.full(shape, fill_value, d), device, requires_grad)


# -- random ------------------------------------------------------------------------------
def rand(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None) -> Tensor:
    """Uniform draws from [0, 1).

    Examples:
        >>> lm.rand(2, 3).shape
        lamina.Size([2, 3])
    """
    draws = numpy_rng(generator).random(_size(size))
    return _new(draws.astype(_float(dtype)), device, requires_grad)


def randn(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, out: Any = None) -> Tensor:
    """Standard normal draws.

    Examples:
        >>> lm.randn(4).dtype
        dtype('float32')
    """
    draws = numpy_rng(generator).standard_normal(_size(size))
    return _new(draws.astype(_float(dtype)), device, requires_grad)


def randint(low: int, high: Any = None, size: Any = None, *, generator: Any = None,
            dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from [low, high) (`randint(high, size)` from [0, high));
    int64 unless `dtype` says otherwise.

    Examples:
        >>> lm.randint(0, 10, (2, 2)).dtype
        dtype('int64')
    """
    if size is None:
        low, high, size = 0, low, high
    if size is None:
        raise TypeError("randint: a size is needed, as randint(10, (2, 3))")
    draws = numpy_rng(generator).integers(low, high, _size((size,)))
    return _new(draws.astype(dtypes.resolve(dtype) or dtypes.int64), device,
                requires_grad)


def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64).

    Examples:
        >>> sorted(lm.randperm(4).tolist())
        [0, 1, 2, 3]
    """
    perm = numpy_rng(generator).permutation(n)
    return _new(perm.astype(dtypes.resolve(dtype) or dtypes.int64), device,
                requires_grad)


def rand_like(x: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, generator: Any = None) -> Tensor:
    """Uniform [0, 1) draws of x's shape and dtype.

    Examples:
        >>> lm.rand_like(lm.zeros(3)).shape
        lamina.Size([3])
    """
    shape, d = _like(x, dtype)
    return rand(shape, dtype=d, device=device, requires_grad=requires_grad,
                generator=generator)


def randn_like(x: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, generator: Any = None) -> Tensor:
    """Standard normal draws of x's shape and dtype.

    Examples:
        >>> lm.randn_like(lm.zeros(3, dtype=lm.float64)).dtype
        dtype('float64')
    """
    shape, d = _like(x, dtype)
    return randn(shape, dtype=d, device=device, requires_grad=requires_grad,
                 generator=generator)


def randint_like(x: Tensor, low: int, high: Any = None, *, dtype: Any = None,
                 device: Any = None, requires_grad: bool = False,
                 generator: Any = None) -> Tensor:
    """Integers from [low, high) in x's shape and dtype.

    Examples:
        >>> lm.randint_like(lm.zeros(3), 5).shape
        lamina.Size([3])
    """
    shape, d = _like(x, dtype)
    if high is None:
        low, high = 0, low
    return randint(low, high, shape, dtype=d, device=device, generator=generator)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Any = None,
           dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Normal draws: `normal(mean, std, size)` with numbers, or elementwise with tensors of
    means and/or standard deviations (the result takes their broadcast shape).

    Examples:
        >>> lm.normal(0.0, 1.0, size=(2, 2)).shape
        lamina.Size([2, 2])
        >>> lm.normal(lm.zeros(3), 1.0).shape
        lamina.Size([3])
    """
    m = mean.array if isinstance(mean, Tensor) else mean
    s = std.array if isinstance(std, Tensor) else std
    if size is None:
        if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
            raise TypeError("normal: give a size with scalar mean and std, as "
                            "normal(0, 1, size=(2, 3))")
        shape = np.broadcast_shapes(np.shape(m), np.shape(s))
        d = next(t.dtype for t in (mean, std) if isinstance(t, Tensor))
    else:
        shape, d = _size((size,)), _float(dtype)
    draws = numpy_rng(generator).standard_normal(shape) * s + m
    return _new(np.asarray(draws).astype(d), device, requires_grad)


def bernoulli(p: Tensor, *, generator: Any = None) -> Tensor:
    """1 with probability p, elementwise (p's shape and dtype).

    Examples:
        >>> lm.bernoulli(lm.tensor([0.0, 1.0]))
        tensor([0., 1.])
    """
    draws = numpy_rng(generator).random(p.shape) < p.array
    return Tensor(draws.astype(p.dtype))


def multinomial(probs: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Any = None) -> Tensor:
    """Category indices drawn from each row of (unnormalised, non-negative) weights.

    Examples:
        >>> lm.multinomial(lm.tensor([0.0, 1.0]), 2, replacement=True)
        tensor([1, 1])
    """
    rng = numpy_rng(generator)
    w = np.atleast_2d(probs.array).astype(np.float64)
    if (w < 0).any() or not np.isfinite(w).all() or (w.sum(-1) <= 0).any():
        raise RuntimeError("multinomial: probability tensor contains either inf, nan or "
                           "element < 0, or a row sums to zero")
    if not replacement and num_samples > (w > 0).sum(-1).min():
        raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) "
                           "samples without replacement")
    out = np.stack([rng.choice(w.shape[1], num_samples, replace=replacement, p=r / r.sum())
                    for r in w]).astype(np.int64)
    return Tensor(out if probs.ndim == 2 else out[0])


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
