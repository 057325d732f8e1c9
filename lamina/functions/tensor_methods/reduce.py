"""Tensor methods that reduce (PyTorch's names: `dim`, `keepdim`; NumPy's `axis`,
`keepdims` accepted too); the ops are in `lamina.functions.reduction`, and those of max
and min over a dim, which give indices too, in `.sorting`. argmax, sort, topk and the
other methods that return indices are in tensor_methods.sorting."""

from __future__ import annotations

from typing import Any


def _dim(dim: Any, kwargs: dict[str, Any]) -> tuple[Any, bool | None]:
    """PyTorch's dim / keepdim, or NumPy's axis / keepdims, from one call's arguments."""
    axis = kwargs.pop("axis", None)
    keepdims = kwargs.pop("keepdims", None)
    if kwargs:
        raise TypeError(f"unexpected keyword arguments {sorted(kwargs)}")
    return (axis if dim is None else dim), keepdims


class ReduceMethods:
    """sum, mean, std, var, prod, norm, max/min, argmax, sort, topk, median, all, any, ..."""

    __slots__ = ()

    def sum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
            **kwargs: Any) -> Any:
        """Sum over `dim` (all elements by default).

        Examples:
            >>> x = lm.tensor([[1, 2], [3, 4]])
            >>> x.sum(), x.sum(dim=0), x.sum(1, keepdim=True).shape
            (tensor(10), tensor([4, 6]), lamina.Size([2, 1]))
        """
        from lamina.functions.reduction import sum

        dim, kd = _dim(dim, kwargs)
        return sum(self, dim, keepdim if kd is None else kd, dtype=dtype)

    def mean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,
             **kwargs: Any) -> Any:
        """Mean over `dim` (all elements by default).

        Examples:
            >>> lm.tensor([[1.0, 2.0], [3.0, 4.0]]).mean(dim=1)
            tensor([1.5000, 3.5000])
        """
        from lamina.functions.reduction import mean

        dim, kd = _dim(dim, kwargs)
        return mean(self, dim, keepdim if kd is None else kd, dtype=dtype)

    def var(self, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
            correction: Any = None, **kwargs: Any) -> Any:
        """Variance over `dim` (correction 1 by default).

        Examples:
            >>> lm.tensor([1.0, 2.0, 3.0, 4.0]).var()
            tensor(1.6667)
        """
        from lamina.functions.reduction import var

        dim, kd = _dim(dim, kwargs)
        return var(self, dim, unbiased, keepdim if kd is None else kd, correction=correction)

    def std(self, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,
            correction: Any = None, **kwargs: Any) -> Any:
        """Standard deviation over `dim` (correction 1 by default).

        Examples:
            >>> lm.tensor([1.0, 3.0]).std(unbiased=False)
            tensor(1.)
        """
        from lamina.functions.reduction import std

        dim, kd = _dim(dim, kwargs)
        return std(self, dim, unbiased, keepdim if kd is None else kd, correction=correction)

    def prod(self, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        """Product over one dim (all elements by default).

        Examples:
            >>> lm.tensor([[1, 2], [3, 4]]).prod(1)
            tensor([ 2, 12])
        """
        from lamina.functions.reduction import prod

        return prod(self, dim, keepdim, dtype=dtype)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: bool = False,
             dtype: Any = None) -> Any:
        """The p-norm over `dim` (2-norm of all elements by default).

        Examples:
            >>> lm.tensor([3.0, 4.0]).norm()
            tensor(5.)
        """
        from lamina.functions.reduction import norm

        return norm(self, p, dim, keepdim, dtype=dtype)

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Any:
        """log(sum(exp(x))) over `dim`, computed stably.

        Examples:
            >>> lm.zeros(2, 4).logsumexp(1).exp()
            tensor([4., 4.])
        """
        from lamina.functions.reduction import logsumexp

        return logsumexp(self, dim, keepdim)

    def cumsum(self, dim: int, *, dtype: Any = None) -> Any:
        """Running sums along `dim`.

        Examples:
            >>> lm.tensor([1, 2, 3]).cumsum(0)
            tensor([1, 3, 6])
        """
        from lamina.functions.reduction import cumsum

        return cumsum(self, dim, dtype=dtype)

    def cumprod(self, dim: int, *, dtype: Any = None) -> Any:
        """Running products along `dim`.

        Examples:
            >>> lm.tensor([1, 2, 3]).cumprod(0)
            tensor([1, 2, 6])
        """
        from lamina.functions.reduction import cumprod

        return cumprod(self, dim, dtype=dtype)

    def max(self, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        """The largest element; over a dim, the named tuple (values, indices); against a
        tensor, the elementwise maximum.

        Examples:
            >>> values, indices = lm.tensor([[1.0, 5.0], [7.0, 2.0]]).max(dim=1)
            >>> indices
            tensor([1, 0])
        """
        return self._extreme("max", dim, keepdim, kwargs)

    def min(self, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        """The smallest element; over a dim, (values, indices); against a tensor, the
        elementwise minimum.

        Examples:
            >>> lm.tensor([[1.0, 5.0], [7.0, 2.0]]).min(dim=0)
            lamina.return_types.min(
            values=tensor([1., 2.]),
            indices=tensor([0, 1]))
        """
        return self._extreme("min", dim, keepdim, kwargs)

    def _extreme(self, kind: str, dim: Any, keepdim: bool, kwargs: dict[str, Any]) -> Any:
        from lamina.functions import axis_reductions as red
        from lamina.functions import math
        from lamina.functions.sorting import max_dim

        if hasattr(dim, "array"):
            return (math.maximum if kind == "max" else math.minimum)(self, dim)
        dim, kd = _dim(dim, kwargs)
        keepdim = keepdim if kd is None else kd
        if dim is None:
            if self.array.size == 0:
                raise RuntimeError(f"{kind}(): Expected reduction dim to be specified for "
                                   "input.numel() == 0. Specify the reduction dim with the "
                                   "'dim' argument.")
            return (red.max if kind == "max" else red.min)(self, None, keepdim)
        if isinstance(dim, (tuple, list)):  # NumPy-style axes: a plain reduction
            return (red.max if kind == "max" else red.min)(self, tuple(dim), keepdim)
        return max_dim(kind, self, dim, keepdim)

    def amax(self, dim: Any = (), keepdim: bool = False) -> Any:
        """The largest value over `dim`; ties share the gradient.

        Examples:
            >>> lm.tensor([[1, 5], [7, 2]]).amax(dim=1)
            tensor([5, 7])
        """
        from lamina.functions.reduction import amax

        return amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: bool = False) -> Any:
        """The smallest value over `dim`; ties share the gradient.

        Examples:
            >>> lm.tensor([[1, 5], [7, 2]]).amin(1)
            tensor([1, 2])
        """
        from lamina.functions.reduction import amin

        return amin(self, dim, keepdim)

    def all(self, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        """Whether every element is non-zero (a bool tensor).

        Examples:
            >>> lm.tensor([[True, False], [True, True]]).all(dim=1)
            tensor([False,  True])
        """
        from lamina.functions.reduction import all

        dim, kd = _dim(dim, kwargs)
        return all(self, dim, keepdim if kd is None else kd)

    def any(self, dim: Any = None, keepdim: bool = False, **kwargs: Any) -> Any:
        """Whether any element is non-zero (a bool tensor).

        Examples:
            >>> lm.tensor([[True, False], [False, False]]).any(1)
            tensor([ True, False])
        """
        from lamina.functions.reduction import any

        dim, kd = _dim(dim, kwargs)
        return any(self, dim, keepdim if kd is None else kd)

    def count_nonzero(self, dim: Any = None) -> Any:
        """How many elements are non-zero, over `dim`.

        Examples:
            >>> lm.tensor([0, 1, 2]).count_nonzero()
            tensor(2)
        """
        from lamina.functions.reduction import count_nonzero

        return count_nonzero(self, dim)
