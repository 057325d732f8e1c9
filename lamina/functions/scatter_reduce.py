"""scatter_reduce: `src` reduced into a copy of `x` at the positions (dim, index) name, by
sum, prod, mean, amax or amin, with or without x's own value (include_self).

The gradients are PyTorch's: a sum or mean hands each element its share; amax and amin
split the gradient evenly between the elements equal to the result; prod gives each
element the product of the others (exactly, with zeros among them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.functions.indexing import _along, _check_index

REDUCES = ("sum", "prod", "mean", "amax", "amin")
_UFUNC = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
          "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype) -> Any:
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    big = np.inf if dtype.kind == "f" else np.iinfo(dtype).max
    return -big if reduce == "amax" else big


class ScatterReduce(Function):
    def __init__(self, axis: int, reduce: str, include_self: bool) -> None:
        if reduce not in REDUCES:
            raise RuntimeError(f"scatter_reduce(): reduce must be one of {REDUCES}; got "
                               f"{reduce!r}")
        self.axis, self.reduce, self.include_self = axis, reduce, include_self

    def forward(self, x: Any, index: Any, src: Any) -> Any:
        _check_index("scatter_reduce", x, index, self.axis)
        key = _along(index, self.axis)
        part = src[tuple(slice(n) for n in index.shape)]
        touched = np.zeros(x.shape, np.int64)
        np.add.at(touched, key, 1)
        # x takes part where include_self says, and wherever no element of src lands
        own = np.ones(x.shape, bool) if self.include_self else touched == 0
        out = np.where(own, x, _identity(self.reduce, x.dtype)).astype(x.dtype)
        _UFUNC[self.reduce].at(out, key, part)
        count = touched + own
        if self.reduce == "mean":
            out = (out / np.maximum(count, 1)).astype(x.dtype) if x.dtype.kind == "f" \
                else out // np.maximum(count, 1)
        self.save_for_backward(x, index, part, out)
        self.meta = (own, count, src.shape)
        return out

    def backward(self, gy: Any) -> tuple[Any, None, Any]:
        x, index, part, y = self.saved_tensors
        own, count, src_shape = self.meta
        key = _along(index, self.axis)
        if self.reduce in ("sum", "mean"):
            share = gy / count if self.reduce == "mean" else gy
            gx, gpart = share * own, share[key]
        elif self.reduce == "prod":
            gx, gpart = self._prod_grads(gy, x, part, key, own)
        else:  # amax, amin: split evenly between the elements equal to the result
            hit_self = own & (x == y)
            hit = part == y[key]
            # PyTorch counts x among the ties even where include_self leaves it out (and
            # gives it no gradient there): the same split here
            ties = (x == y).astype(gy.dtype)
            np.add.at(ties, key, hit)
            share = gy / np.maximum(ties, 1)
            gx, gpart = share * hit_self, share[key] * hit
        gsrc = np.zeros(src_shape, gy.dtype)
        gsrc[tuple(slice(n) for n in index.shape)] = gpart
        return gx.astype(gy.dtype, copy=False), None, gsrc

    @staticmethod
    def _prod_grads(gy: Any, x: Any, part: Any, key: Any, own: Any) -> tuple[Any, Any]:
        """Each element's gradient is gy times the product of the others at its position:
        the product of the nonzero ones divided by it where it is not zero; where it is the
        one zero there, the product of the nonzero ones; else 0."""
        zeros = (own & (x == 0)).astype(np.int64)
        np.add.at(zeros, key, part == 0)
        nonzero = np.where(own & (x != 0), x, 1).astype(gy.dtype)
        np.multiply.at(nonzero, key, np.where(part != 0, part, 1))

        def others(v: Any, z: Any, p: Any) -> Any:
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(v != 0, np.where(z == 0, p / np.where(v != 0, v, 1), 0),
                                np.where(z == 1, p, 0))
        gx = gy * own * others(x, zeros, nonzero)
        gpart = gy[key] * others(part, zeros[key], nonzero[key])
        return gx, gpart


class LogCumSumExp(Function):
    """log(cumsum(exp(x))) along an axis, as a running logaddexp (no overflow, no early
    underflow); its gradient, sum over j >= i of g_j exp(x_i - y_j), is summed in log space
    for the positive and negative parts of g."""

    def __init__(self, axis: int) -> None:
        self.axis = axis

    def forward(self, x: Any) -> Any:
        y = np.logaddexp.accumulate(x, axis=self.axis) if x.shape[self.axis] else x.copy()
        self.save_for_backward(x, y)
        return y

    def backward(self, gy: Any) -> Any:
        x, y = self.saved_tensors
        gx = np.zeros_like(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            for sign in (1, -1):
                part = np.log(np.maximum(sign * gy, 0)) - y
                tail = np.flip(np.logaddexp.accumulate(np.flip(part, self.axis), axis=self.axis),
                               self.axis)
                gx = gx + sign * np.exp(x + tail)
        return np.where(np.isnan(gx) & ~np.isnan(x + y), 0, gx).astype(x.dtype, copy=False)
