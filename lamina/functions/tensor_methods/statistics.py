"""Tensor methods for counting and order statistics: cummax/cummin (values and
indices), aminmax, quantile, msort, and the integer-valued unique, bincount and histc
(no gradient, as in PyTorch). The differentiable ones gather their values from the input
by index, so the gradient goes to the elements picked."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import return_types
from lamina.functions.tensor_methods.shared import constant

cummax_type = return_types.cummax
cummin_type = return_types.cummin


def _running(a: np.ndarray, axis: int, better: Any) -> np.ndarray:
    """The index of the running best along `axis` (the latest of equal ones, as PyTorch's,
    and a NaN, once seen, stays best)."""
    moved = np.moveaxis(a, axis, -1)
    out = np.empty(moved.shape, np.int64)
    best = moved[..., 0].copy()
    idx = np.zeros(best.shape, np.int64)
    for i in range(moved.shape[-1]):
        v = moved[..., i]
        take = (better(v, best) | (v == best) | np.isnan(v)) & ~(np.isnan(best) & (i > 0))
        best, idx = np.where(take, v, best), np.where(take, i, idx)
        out[..., i] = idx
    return np.moveaxis(out, -1, axis)


def _running_best(x: Any, dim: int, better: Any) -> tuple[Any, Any]:
    """(values, indices) of the running best along `dim`; the values gathered from x by
    the indices, so the gradient goes to the element each picked."""
    a = x.detach().numpy()
    if a.ndim == 0:
        return x.clone(), constant(np.zeros((), np.int64))
    index = constant(_running(a, dim, better))
    return x.gather(dim, index), index


_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile_points(q: Any, interpolation: str, op: str) -> np.ndarray:
    """q (a number or a 1-D tensor of them in [0, 1]) as a float64 array; the mode checked."""
    if interpolation not in _MODES:
        raise ValueError(f"{op}: interpolation must be one of {_MODES}; got {interpolation!r}")
    qs = np.asarray(q.detach().numpy() if hasattr(q, "detach") else q, np.float64)
    if qs.ndim > 1 or ((qs < 0) | (qs > 1)).any():
        raise RuntimeError(f"{op}: q must be a number or a 1-D tensor of numbers in [0, 1]; "
                           f"got {qs}")
    return qs


def bracket(pos: np.ndarray, interpolation: str) -> tuple[Any, Any, Any]:
    """The sorted positions below and above each fractional position, and the weight of the
    upper one, by the interpolation mode (nearest: half to even, as PyTorch's round)."""
    lo, hi = np.floor(pos), np.ceil(pos)
    if interpolation == "lower":
        hi = lo
    elif interpolation == "higher":
        lo = hi
    elif interpolation == "nearest":
        lo = hi = np.round(pos)
    frac = np.full(np.shape(pos), 0.5) if interpolation == "midpoint" else pos - lo
    return lo, hi, frac


def stacked_quantiles(out: list[Any], qs: np.ndarray, d: int, keepdim: bool, flat: bool,
                      ndim: int) -> Any:
    """The per-q results (each keeping dim d) stacked on a leading q dim, as PyTorch
    shapes them: d dropped unless keepdim, the q dim dropped for a single q."""
    from lamina.functions.shape import stack

    result = stack(out, 0)
    if not keepdim:
        result = result.squeeze(d + 1)
    elif flat:
        result = result.reshape(len(out), *((1,) * ndim))
    return result.squeeze(0) if qs.ndim == 0 else result


class StatisticsMethods:
    __slots__ = ()

    def cummax(self, dim: int) -> Any:
        """The running maximum along `dim` and where it was found: (values, indices).

        Examples:
            >>> lm.tensor([1.0, 3.0, 2.0]).cummax(0).values
            tensor([1., 3., 3.])
        """
        return cummax_type(*_running_best(self, dim, np.greater))

    def cummin(self, dim: int) -> Any:
        """The running minimum along `dim` and where it was found: (values, indices).

        Examples:
            >>> lm.tensor([2.0, 1.0, 3.0]).cummin(0).indices
            tensor([0, 1, 1])
        """
        return cummin_type(*_running_best(self, dim, np.less))

    def aminmax(self, *, dim: int | None = None, keepdim: bool = False) -> Any:
        """(min, max) over `dim` (all elements by default), a named tuple.

        Examples:
            >>> lm.tensor([3.0, 1.0, 2.0]).aminmax()
            lamina.return_types.aminmax(
            min=tensor(1.),
            max=tensor(3.))
        """
        if dim is None:
            return return_types.aminmax(self.amin(), self.amax())
        return return_types.aminmax(self.amin(dim, keepdim), self.amax(dim, keepdim))

    def msort(self) -> Any:
        """sort(dim=0).values.

        Examples:
            >>> lm.tensor([3, 1, 2]).msort()
            tensor([1, 2, 3])
        """
        return self.sort(dim=0).values

    def quantile(self, q: Any, dim: int | None = None, keepdim: bool = False, *,
                 interpolation: str = "linear") -> Any:
        """The q-th quantiles along `dim` (of all elements by default): q a number or a 1-D
        tensor of them in [0, 1], whose dim then leads the result. Between two elements,
        `interpolation` is "linear", "lower", "higher", "midpoint" or "nearest".

        Examples:
            >>> lm.tensor([1.0, 2.0, 3.0, 4.0]).quantile(0.5)
            tensor(2.5000)
        """
        qs = quantile_points(q, interpolation, "quantile")
        x = self.reshape(-1) if dim is None else self
        d = 0 if dim is None else dim % max(self.ndim, 1)
        ordered = x.sort(dim=d).values
        out = []
        for qv in qs.reshape(-1):
            lo, hi, frac = bracket(np.asarray(qv * (x.shape[d] - 1)), interpolation)
            a, b = ordered.narrow(d, int(lo), 1), ordered.narrow(d, int(hi), 1)
            out.append(a if lo == hi else a * (1 - float(frac)) + b * float(frac))
        return stacked_quantiles(out, qs, d, keepdim, dim is None, self.ndim)

    def unique(self, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
               return_counts: bool = False, dim: int | None = None) -> Any:
        """The distinct values (sorted), and where asked the index of each element's value
        among them and each value's count; with `dim`, the distinct slices along it.

        Examples:
            >>> lm.tensor([2, 1, 2]).unique(return_counts=True)
            (tensor([1, 2]), tensor([1, 2]))
        """
        values, inverse, counts = np.unique(self.detach().numpy(), return_inverse=True,
                                            return_counts=True, axis=dim)
        out = [constant(values)]
        if return_inverse:
            shape = self.shape if dim is None else (self.shape[dim],)
            out.append(constant(inverse.reshape(shape).astype(np.int64)))
        if return_counts:
            out.append(constant(counts.astype(np.int64)))
        return out[0] if len(out) == 1 else tuple(out)

    def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False,
                           dim: int | None = None) -> Any:
        """Each run of equal consecutive elements (of the flattened tensor) as one.

        Examples:
            >>> lm.tensor([1, 1, 2, 1]).unique_consecutive()
            tensor([1, 2, 1])
        """
        if dim is not None:
            raise NotImplementedError("unique_consecutive: dim= is not supported; flatten "
                                      "first or use unique(dim=)")
        a = self.detach().numpy().reshape(-1)
        starts = np.concatenate([[True], a[1:] != a[:-1]]) if a.size else np.zeros(0, bool)
        out = [constant(a[starts])]
        if return_inverse:
            out.append(constant((np.cumsum(starts) - 1).reshape(self.shape)))
        if return_counts:
            out.append(constant(np.diff(np.append(np.flatnonzero(starts), a.size))))
        return out[0] if len(out) == 1 else tuple(out)

    def bincount(self, weights: Any = None, minlength: int = 0) -> Any:
        """How often each value 0..max occurs in this 1-D integer tensor (summing
        `weights` instead, where given).

        Examples:
            >>> lm.tensor([0, 2, 2]).bincount()
            tensor([1, 0, 2])
        """
        a = self.detach().numpy()
        if a.ndim != 1 or a.dtype.kind not in "iu" or (a < 0).any():
            raise RuntimeError("bincount: the tensor must be 1-D of non-negative integers; "
                               f"got shape {tuple(a.shape)}, dtype {a.dtype}")
        w = None if weights is None else np.asarray(
            weights.detach().numpy() if hasattr(weights, "detach") else weights)
        counts = np.bincount(a, w, minlength)
        if w is None:
            return constant(counts.astype(np.int64))
        return constant(counts.astype(w.dtype if w.dtype.kind == "f" else np.float64))

    def histc(self, bins: int = 100, min: float = 0, max: float = 0) -> Any:  # noqa: A002
        """Counts of the elements in `bins` equal bins over [min, max] (the elements' own
        range where min == max), elements outside left out; the tensor's dtype.

        Examples:
            >>> lm.tensor([1.0, 2.0, 1.0]).histc(bins=4, min=0, max=3)
            tensor([0., 2., 1., 0.])
        """
        a = self.detach().numpy().reshape(-1)
        lo, hi = (a.min(), a.max()) if min == max and a.size else (min, max)
        if lo == hi:
            lo, hi = lo - 1, hi + 1
        counts, _ = np.histogram(a, bins, (lo, hi))
        return constant(counts.astype(self.dtype))

    def histogram(self, bins: Any = 100, *, range: Any = None,  # noqa: A002
                  weight: Any = None, density: bool = False) -> Any:
        """lamina.histogram(self, ...): (hist, bin_edges).

        Examples:
            >>> lm.tensor([1.0, 2.0, 1.0]).histogram(2).hist
            tensor([2., 1.])
        """
        from lamina.tensor_functions_misc import histogram

        return histogram(self, bins, range=range, weight=weight, density=density)
