"""Random tensors with PyTorch's signatures: rand, randn, randint, randperm, their *_like
forms, normal, bernoulli and multinomial. Draws come from the default generator or
`generator=`, so `lamina.manual_seed` repeats them; floating-point results take the
default dtype (float32)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor
from lamina.creation import float_dtype, like_shape, new_leaf, size_of
from lamina.random import numpy_rng


def rand(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, out: Any = None) -> Tensor:
    """Uniform draws from [0, 1).

    Examples:
        >>> lm.rand(2, 3).shape
        lamina.Size([2, 3])
    """
    d, shape = float_dtype(dtype), size_of(size)
    if d.kind == "c":  # real and imaginary parts each from [0, 1), as PyTorch's
        draws = numpy_rng(generator).random((*shape, 2)).astype(d.type(0).real.dtype)
        return new_leaf(draws.view(d)[..., 0], device, requires_grad)
    draws = numpy_rng(generator).random(shape)
    return new_leaf(draws.astype(d), device, requires_grad)


def randn(*size: Any, generator: Any = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False, out: Any = None) -> Tensor:
    """Standard normal draws.

    Examples:
        >>> lm.randn(4).dtype
        dtype('float32')
    """
    d, shape = float_dtype(dtype), size_of(size)
    if d.kind == "c":  # variance 1 split evenly between the two parts, as PyTorch's
        draws = numpy_rng(generator).standard_normal((*shape, 2)) * np.sqrt(0.5)
        return new_leaf(draws.astype(d.type(0).real.dtype).view(d)[..., 0], device,
                        requires_grad)
    draws = numpy_rng(generator).standard_normal(shape)
    return new_leaf(draws.astype(d), device, requires_grad)


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
    draws = numpy_rng(generator).integers(low, high, size_of((size,)))
    return new_leaf(draws.astype(dtypes.resolve(dtype) or dtypes.int64), device,
                requires_grad)


def randperm(n: int, *, generator: Any = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0 .. n-1 (int64).

    Examples:
        >>> sorted(lm.randperm(4).tolist())
        [0, 1, 2, 3]
    """
    perm = numpy_rng(generator).permutation(n)
    return new_leaf(perm.astype(dtypes.resolve(dtype) or dtypes.int64), device,
                requires_grad)


def rand_like(x: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, generator: Any = None) -> Tensor:
    """Uniform [0, 1) draws of x's shape and dtype.

    Examples:
        >>> lm.rand_like(lm.zeros(3)).shape
        lamina.Size([3])
    """
    shape, d = like_shape(x, dtype)
    return rand(shape, dtype=d, device=device, requires_grad=requires_grad,
                generator=generator)


def randn_like(x: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, generator: Any = None) -> Tensor:
    """Standard normal draws of x's shape and dtype.

    Examples:
        >>> lm.randn_like(lm.zeros(3, dtype=lm.float64)).dtype
        dtype('float64')
    """
    shape, d = like_shape(x, dtype)
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
    shape, d = like_shape(x, dtype)
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
        shape, d = size_of((size,)), float_dtype(dtype)
    draws = numpy_rng(generator).standard_normal(shape) * s + m
    return new_leaf(np.asarray(draws).astype(d), device, requires_grad)


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
