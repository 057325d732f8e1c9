"""More of PyTorch's top-level functions that are no Tensor method: histogram, the Poisson and
binomial draws, vander, cumulative_trapezoid, unravel_index, chain_matmul, lu_unpack, the
legacy range, and the process queries (default device, interop threads, typename). Built
from existing ops, so the differentiable ones differentiate."""

from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import numpy as np

from lamina import dtypes, parallel, return_types
from lamina.autograd.tensor import Tensor
from lamina.creation import arange, as_tensor, full_like

histogram_result = return_types.histogram
_interop_threads: int | None = None


def _float(dtype: Any) -> Any:
    return dtypes.resolve(dtype) if dtype is not None else dtypes.get_default_dtype()


def histogram(input: Tensor, bins: Any = 100, *, range: Any = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False) -> Any:
    """(hist, bin_edges): the counts (or weights' sums, or a density) in `bins` equal bins
    over `range` (the data's by default), or between given edges.

    Examples:
        >>> lm.histogram(lm.tensor([1.0, 2.0, 1.0]), bins=2, range=(0.0, 2.0))
        lamina.return_types.histogram(
        hist=tensor([0., 3.]),
        bin_edges=tensor([0., 1., 2.]))
    """
    a = input.detach().numpy()
    edges = bins.detach().numpy() if isinstance(bins, Tensor) else bins
    w = None if weight is None else weight.detach().numpy()
    hist, out_edges = np.histogram(a, edges, range, density=density, weights=w)
    return histogram_result(as_tensor(hist.astype(a.dtype)),
                            as_tensor(out_edges.astype(a.dtype)))


def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """A draw from the Poisson law of each rate in `input`, in its dtype.

    Examples:
        >>> lm.poisson(lm.zeros(3))
        tensor([0., 0., 0.])
    """
    from lamina.random import numpy_rng

    rates = input.detach().numpy()
    return as_tensor(numpy_rng(generator).poisson(rates).astype(rates.dtype))


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """A draw from the binomial law of `count` trials of probability `prob`, in prob's
    dtype.

    Examples:
        >>> lm.binomial(lm.tensor([5.0]), lm.tensor([1.0]))
        tensor([5.])
    """
    from lamina.random import numpy_rng

    p = prob.detach().numpy()
    n = count.detach().numpy().astype(np.int64)
    return as_tensor(numpy_rng(generator).binomial(n, p).astype(p.dtype))


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:  # noqa: N803
    """The Vandermonde matrix of a 1-D x: columns x ** (N-1), ..., x ** 0 (reversed with
    `increasing`); differentiable.

    Examples:
        >>> lm.vander(lm.tensor([1, 2, 3]), 3)
        tensor([[1, 1, 1],
                [4, 2, 1],
                [9, 3, 1]])
    """
    from lamina.functions.shape import stack

    n = len(x) if N is None else N
    powers = [x ** k if k else x.new_ones(x.shape) for k in builtins.range(n)]
    return stack(powers if increasing else powers[::-1], 1) if n else x.new_zeros(len(x), 0)



def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
                         dim: int = -1) -> Tensor:
    """The trapezoid rule's running integral of y along `dim` (one fewer point).

    Examples:
        >>> lm.cumulative_trapezoid(lm.tensor([1.0, 2.0, 3.0]))
        tensor([1.5000, 4.0000])
    """
    n = y.shape[dim] - 1
    mid = (y.narrow(dim, 1, n) + y.narrow(dim, 0, n)) / 2
    if x is None:
        return (mid * (1.0 if dx is None else dx)).cumsum(dim)
    return (mid * x.diff(dim=dim if x.ndim == y.ndim else -1)).cumsum(dim)


def unravel_index(indices: Any, shape: Any) -> tuple[Tensor, ...]:
    """The coordinates, one int64 tensor per dim of `shape`, of flat indices.

    Examples:
        >>> lm.unravel_index(lm.tensor(5), (2, 3))
        (tensor(1), tensor(2))
    """
    flat = np.asarray(indices.numpy() if isinstance(indices, Tensor) else indices)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if flat.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: expected integer indices; got {flat.dtype}")
    if flat.size and (flat.min() < -math.prod(shape) or flat.max() >= math.prod(shape)):
        raise RuntimeError(f"unravel_index: index out of bounds for shape {shape}")
    coords = np.unravel_index(np.where(flat < 0, flat + math.prod(shape), flat), shape)
    return tuple(as_tensor(c.astype(np.int64)) for c in coords)


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of the matrices, left to right; deprecated, with PyTorch's warning, for
    linalg.multi_dot.

    Examples:
        >>> lm.chain_matmul(lm.eye(2), lm.ones(2, 3)).shape  # doctest: +SKIP
        lamina.Size([2, 3])
    """
    warnings.warn("lamina.chain_matmul is deprecated, as torch.chain_matmul is. Use "
                  "lamina.linalg.multi_dot instead, which accepts a list of two or more "
                  "tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    out = matrices[0]
    for m in matrices[1:]:
        out = out @ m
    return out


def range(start: float, end: float, step: float = 1, *,  # noqa: A001
          dtype: Any = None, **kwargs: Any) -> Tensor:
    """The points start, start + step, ... up to and including end, in the default float
    dtype; deprecated, with PyTorch's warning (arange excludes end).

    Examples:
        >>> lm.range(1, 4)  # doctest: +SKIP
        tensor([1., 2., 3., 4.])
    """
    warnings.warn("lamina.range is deprecated, as torch.range is, because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use lamina.arange, "
                  "which produces values in [start, end).", UserWarning, stacklevel=2)
    count = int(math.floor((end - start) / step)) + 1
    return arange(count, dtype=_float(dtype)) * step + start


def fill(input: Tensor, value: Any) -> Tensor:  # noqa: A002
    """A new tensor like `input`, every element `value`; in the graph, input's gradient
    is zeros (input's NaN not reaching it), as PyTorch's.

    Examples:
        >>> lm.fill(lm.zeros(2), 3.0)
        tensor([3., 3.])
    """
    from lamina.functions.math import where

    filled = full_like(input, value.item() if isinstance(value, Tensor) else value)
    return where(as_tensor(np.zeros((), bool)), input, filled) if input.requires_grad \
        else filled


def rsub(input: Tensor, other: Any, alpha: float = 1) -> Tensor:  # noqa: A002
    """other - alpha * input.

    Examples:
        >>> lm.rsub(lm.tensor([1.0]), 5.0)
        tensor([4.])
    """
    return other - (input if alpha == 1 else input * alpha)


def scalar_tensor(s: Any, *, dtype: Any = None, **kwargs: Any) -> Tensor:
    """A 0-d tensor of the number s, in the default float dtype.

    Examples:
        >>> lm.scalar_tensor(2)
        tensor(2.)
    """
    return as_tensor(np.asarray(s, _float(dtype)))


def typename(obj: Any) -> str:
    """A tensor's type string (`x.type()`), or the Python type's name.

    Examples:
        >>> lm.typename(lm.zeros(1))
        'lamina.FloatTensor'
    """
    return obj.type() if isinstance(obj, Tensor) else type(obj).__name__


def get_default_device() -> Any:
    """The device new tensors go to: the CPU.

    Examples:
        >>> lm.get_default_device()
        device(type='cpu')
    """
    return dtypes.CPU


def set_default_device(device: Any) -> None:
    """Accepts "cpu" (or None); another device raises, naming it.

    Examples:
        >>> lm.set_default_device("cpu")
    """
    if device is not None:
        dtypes.check_device(device)


def get_num_interop_threads() -> int:
    """The threads PyTorch would run independent ops on at once; lamina's thread count
    unless set.

    Examples:
        >>> lm.get_num_interop_threads() >= 1
        True
    """
    return _interop_threads or parallel.get_num_threads()


def set_num_interop_threads(threads: int) -> None:
    """Record the interop thread count get_num_interop_threads returns (lamina runs one
    op at a time; its own threads are set with set_num_threads).

    Examples:
        >>> lm.set_num_interop_threads(2); lm.get_num_interop_threads()
        2
    """
    global _interop_threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise RuntimeError(f"set_num_interop_threads: expected an int >= 1; got {threads!r}")
    _interop_threads = threads


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Any:
    """(P, L, U) from linalg.lu_factor's (LU, pivots): see lamina.linalg.lu.

    Examples:
        >>> P, L, U = lm.lu_unpack(*lm.linalg.lu_factor(lm.tensor([[1.0, 2.0], [3.0, 4.0]])))
        >>> U
        tensor([[3.0000, 4.0000],
                [0.0000, 0.6667]])
    """
    from lamina.linalg.lu import lu_unpack as unpack

    return unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


__all__ = ["binomial", "chain_matmul", "cumulative_trapezoid", "fill", "get_default_device",
           "get_num_interop_threads", "histogram", "lu_unpack", "poisson", "range", "rsub",
           "scalar_tensor", "set_default_device", "set_num_interop_threads", "typename",
           "unravel_index", "vander"]
