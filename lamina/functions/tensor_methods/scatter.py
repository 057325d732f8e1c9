"""scatter_reduce, the `*_scatter` ops (a copy with a slice, a selected index or a
diagonal replaced), nanmedian and nanquantile, logcumsumexp, and the smaller names PyTorch
has beside them (narrow_copy, unsafe_split, hardshrink, prelu, frexp, renorm)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import return_types
from lamina.functions.tensor_methods.inplace import _inplace
from lamina.functions.tensor_methods.shared import constant, where


class ScatterMethods:
    __slots__ = ()

    def scatter_reduce(self, dim: int, index: Any, src: Any, reduce: str, *,
                       include_self: bool = True) -> Any:
        """A copy with `src` reduced in at `index` along `dim` by "sum", "prod", "mean",
        "amax" or "amin"; `include_self=False` leaves this tensor's values out where any
        element lands.

        Examples:
            >>> lm.zeros(2).scatter_reduce(0, lm.tensor([0, 0, 1]), lm.tensor([1.0, 3.0, 2.0]),
            ...                            "amax", include_self=False)
            tensor([3., 2.])
        """
        from lamina.functions.operands import cast
        from lamina.functions.scatter_reduce import ScatterReduce
        from lamina.functions.shape import wrap_dim

        axis = wrap_dim(dim, self.ndim, "scatter_reduce")
        return ScatterReduce(axis, reduce, include_self).apply(self, index,
                                                               cast(src, self.dtype))

    scatter_reduce_ = _inplace("scatter_reduce", "0, lm.tensor([[1, 0]]), x, 'sum'")

    def slice_scatter(self, src: Any, dim: int = 0, start: int | None = None,
                      end: int | None = None, step: int = 1) -> Any:
        """A copy with the slice start:end:step along `dim` replaced by `src`.

        Examples:
            >>> lm.zeros(2, 3).slice_scatter(lm.ones(2, 1), 1, 1, 2)
            tensor([[0., 1., 0.],
                    [0., 1., 0.]])
        """
        key = [slice(None)] * self.ndim
        key[dim] = slice(start, end, step)
        return self._scattered(np.arange(self.numel()).reshape(self.shape)[tuple(key)], src)

    def select_scatter(self, src: Any, dim: int, index: int) -> Any:
        """A copy with the slice at `index` along `dim` replaced by `src`.

        Examples:
            >>> lm.zeros(2, 2).select_scatter(lm.ones(2), 0, 1)
            tensor([[0., 0.],
                    [1., 1.]])
        """
        key = [slice(None)] * self.ndim
        key[dim] = index
        return self._scattered(np.arange(self.numel()).reshape(self.shape)[tuple(key)], src)

    def diagonal_scatter(self, src: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
        """A copy with the diagonal (as `diagonal(offset, dim1, dim2)` reads it) replaced by
        `src`.

        Examples:
            >>> lm.zeros(2, 2).diagonal_scatter(lm.tensor([1.0, 2.0]))
            tensor([[1., 0.],
                    [0., 2.]])
        """
        positions = np.arange(self.numel()).reshape(self.shape)
        return self._scattered(np.diagonal(positions, offset, dim1, dim2), src)

    def _scattered(self, at: Any, src: Any) -> Any:
        """A copy with the elements at flat positions `at` (an array of src's shape)
        replaced by src's."""
        if tuple(at.shape) != tuple(src.shape):
            raise RuntimeError(f"expected src to have a size equal to the slice of self: "
                               f"src {tuple(src.shape)}, slice {tuple(at.shape)}")
        return self.reshape(-1).index_put((constant(at.reshape(-1)),), src.reshape(-1)
                                          ).reshape(self.shape)

    def logcumsumexp(self, dim: int) -> Any:
        """log of the running sum of exp along `dim`, computed without overflow.

        Examples:
            >>> lm.zeros(3).logcumsumexp(0)
            tensor([0.0000, 0.6931, 1.0986])
        """
        from lamina import dtypes
        from lamina.functions.operands import cast
        from lamina.functions.scatter_reduce import LogCumSumExp
        from lamina.functions.shape import wrap_dim

        x = self if self.is_floating_point() else cast(self, dtypes.get_default_dtype())
        return LogCumSumExp(wrap_dim(dim, max(self.ndim, 1), "logcumsumexp")).apply(x)

    def nanmedian(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """The lower median of the values that are not NaN (of all, or along `dim` with
        their indices); NaN where every value is NaN.

        Examples:
            >>> lm.tensor([1.0, float("nan"), 3.0, 2.0]).nanmedian()
            tensor(2.)
        """
        x = self.reshape(-1) if dim is None else self
        d = 0 if dim is None else dim % max(self.ndim, 1)
        ordered = x.sort(dim=d)  # NaN sorts last
        count = (~x.isnan()).sum(d, keepdim=True)
        pos = ((count - 1).clamp(min=0) // 2)
        values = ordered.values.gather(d, pos)
        indices = ordered.indices.gather(d, pos)
        if dim is None:
            return values.reshape(())
        if not keepdim:
            values, indices = values.squeeze(d), indices.squeeze(d)
        return return_types.nanmedian(values, indices)

    def nanquantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                    interpolation: str = "linear") -> Any:
        """quantile of the values that are not NaN, slice by slice; NaN where all are.

        Examples:
            >>> lm.tensor([1.0, float("nan"), 3.0, 2.0]).nanquantile(0.5)
            tensor(2.)
        """
        from lamina.functions.tensor_methods.statistics import (
            bracket,
            quantile_points,
            stacked_quantiles,
        )

        qs = quantile_points(q, interpolation, "nanquantile")
        x = self.reshape(-1) if dim is None else self
        d = 0 if dim is None else dim % max(self.ndim, 1)
        ordered = x.sort(dim=d).values  # NaN sorts last: each slice's first `count` count
        count = (~x.isnan()).sum(d, keepdim=True).numpy()
        out = []
        for qv in qs.reshape(-1):
            lo, hi, frac = bracket(qv * np.maximum(count - 1, 0), interpolation)
            a = ordered.gather(d, constant(lo.astype(np.int64)))
            b = ordered.gather(d, constant(hi.astype(np.int64)))
            value = a + (b - a) * constant(frac.astype(self.dtype))
            out.append(where(constant(count == 0), float("nan"), value))
        return stacked_quantiles(out, qs, d, keepdim, dim is None, self.ndim)

    def narrow_copy(self, dim: int, start: int, length: int) -> Any:
        """narrow(dim, start, length), copied.

        Examples:
            >>> lm.arange(4).narrow_copy(0, 1, 2)
            tensor([1, 2])
        """
        return self.narrow(dim, start, length).clone()

    def unsafe_chunk(self, chunks: int, dim: int = 0) -> Any:
        """chunk(chunks, dim) (PyTorch's form that skips a view check).

        Examples:
            >>> len(lm.arange(4).unsafe_chunk(2))
            2
        """
        return self.chunk(chunks, dim)

    def unsafe_split(self, split_size: Any, dim: int = 0) -> Any:
        """split(split_size, dim) (PyTorch's form that skips a view check).

        Examples:
            >>> len(lm.arange(4).unsafe_split(3))
            2
        """
        return self.split(split_size, dim)

    unsafe_split_with_sizes = unsafe_split

    def hardshrink(self, lambd: float = 0.5) -> Any:
        """F.hardshrink: x where |x| > lambd, else 0.

        Examples:
            >>> lm.tensor([0.25, -1.0]).hardshrink()
            tensor([ 0., -1.])
        """
        from lamina.functions import hardshrink

        return hardshrink(self, lambd)

    def prelu(self, weight: Any) -> Any:
        """F.prelu: x where positive, weight * x elsewhere (one weight, or one per channel).

        Examples:
            >>> lm.tensor([-2.0, 1.0]).prelu(lm.tensor([0.25]))
            tensor([-0.5000,  1.0000])
        """
        from lamina.functions import prelu

        return prelu(self, weight)

    def frexp(self) -> Any:
        """(mantissa, exponent) with self = mantissa * 2 ** exponent, |mantissa| in [0.5, 1);
        the exponent an int32 tensor. The mantissa's gradient is 2 ** -exponent.

        Examples:
            >>> m, e = lm.tensor([8.0]).frexp(); m, e
            (tensor([0.5000]), tensor([4], dtype=lamina.int32))
        """
        _, exponent = np.frexp(self.detach().numpy())
        mantissa = self * constant(np.ldexp(1.0, -exponent).astype(self.dtype))
        return return_types.frexp(mantissa, constant(exponent.astype(np.int32)))

    def renorm(self, p: float, dim: int, maxnorm: float) -> Any:
        """Each slice along `dim` whose p-norm exceeds maxnorm scaled down to norm maxnorm.

        Examples:
            >>> lm.tensor([[3.0, 4.0], [0.3, 0.4]]).renorm(2, 0, 1.0)
            tensor([[0.6000, 0.8000],
                    [0.3000, 0.4000]])
        """
        axes = tuple(a for a in range(self.ndim) if a != dim % self.ndim)
        norms = self.abs().pow(p).sum(axes, keepdim=True).pow(1 / p)
        scale = where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.0)
        return self * scale

    renorm_ = _inplace("renorm", "2, 0, 0.5")
