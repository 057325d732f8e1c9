"""The modified Bessel functions of the first kind I0 and I1, plain and exponentially
scaled (PyTorch's special.i0, i0e, i1, i1e), and the spherical Bessel function j0.

Up to |x| = 30 each is its power series, whose terms are all positive there (no
cancellation); beyond, the asymptotic series of e^|x| / sqrt(2 pi |x|), whose terms fall
by at least half from one to the next at that range. Both are good to float64 rounding.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions.operands import floating

SERIES_UP_TO = 30.0
_TERMS = 90  # the series at |x| = 30 has converged to float64 by then
_ASYMPTOTIC_TERMS = 25


def _series(ax: np.ndarray, order: int) -> np.ndarray:
    """sum_k (x / 2)^(2k + order) / (k! (k + order)!) for x >= 0."""
    quarter = ax * ax / 4
    term = (ax / 2) ** order / math.factorial(order)
    total = term.copy()
    for k in range(1, _TERMS):
        term = term * quarter / (k * (k + order))
        total += term
        if np.all(term <= 1e-17 * total):
            break
    return total


def _asymptotic(ax: np.ndarray, order: int) -> np.ndarray:
    """I_order(x) e^-x sqrt(2 pi x) for large x: sum_k (-1)^k prod_j (4 order^2 -
    (2j - 1)^2) / (k! (8x)^k)."""
    mu = 4 * order * order
    term = np.ones_like(ax)
    total = term.copy()
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8 * ax)
        total += term
    return total


def bessel_i_scaled(x: Any, order: int) -> np.ndarray:
    """e^-|x| I_order(x), in float64 (I1 is odd, I0 even)."""
    x = np.asarray(x, np.float64)
    ax = np.abs(x)
    out = np.empty_like(ax)
    small = ax <= SERIES_UP_TO
    out[small] = _series(ax[small], order) * np.exp(-ax[small])
    big = ~small & np.isfinite(ax)
    out[big] = _asymptotic(ax[big], order) / np.sqrt(2 * np.pi * ax[big])
    out[np.isinf(ax)] = 0.0
    out[np.isnan(ax)] = np.nan
    return np.copysign(out, x) if order == 1 else out


def bessel_i(x: Any, order: int) -> np.ndarray:
    """I_order(x) in float64 (inf where it overflows, as PyTorch's)."""
    ax = np.abs(np.asarray(x, np.float64))
    with np.errstate(over="ignore", invalid="ignore"):
        out = bessel_i_scaled(x, order) * np.exp(ax)
    return np.where(np.isinf(ax) & (order == 0), np.inf, out)


class BesselI(Function):
    """I0 or I1 (`order`), exponentially scaled or not; derivatives: I0' = I1,
    I1' = I0 - I1 / x (1/2 at 0), and for e^-|x| I: minus sign(x) times itself."""

    def __init__(self, order: int, scaled: bool) -> None:
        self.order, self.scaled = order, scaled

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        f = bessel_i_scaled if self.scaled else bessel_i
        return f(x, self.order).astype(x.dtype)

    def backward(self, gy: Any) -> Any:
        (x,) = self.saved_tensors
        f = bessel_i_scaled if self.scaled else bessel_i
        i0, i1 = f(x, 0), f(x, 1)
        if self.order == 0:
            d = i1
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                d = np.where(x == 0, 0.5, i0 - i1 / np.where(x == 0, 1, x))
        if self.scaled:
            d = d - np.sign(x) * (i0 if self.order == 0 else i1)
        return (gy * d).astype(gy.dtype)


def bessel_i_op(x: Tensor, order: int, scaled: bool) -> Tensor:
    """I0, I1, i0e or i1e of x (integers promoted to the default float dtype)."""
    return BesselI(order, scaled).apply(floating(x))


class SphericalBesselJ0(Function):
    """sin(x) / x, 1 at 0; its derivative (x cos x - sin x) / x^2, 0 at 0."""

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        safe = np.where(x == 0, 1, x)
        return np.where(x == 0, 1, np.sin(safe) / safe).astype(x.dtype)

    def backward(self, gy: Any) -> Any:
        (x,) = self.saved_tensors
        safe = np.where(x == 0, 1, x)
        d = np.where(x == 0, 0, (safe * np.cos(safe) - np.sin(safe)) / (safe * safe))
        return (gy * d).astype(gy.dtype)
