"""The gamma family: lgamma, digamma and polygamma on arrays, and polygamma's op.

NumPy has none of them and SciPy is not a core dependency. lgamma is the C library's
(Python's math.lgamma, element by element: exact, and fast enough for what calls it, a
distribution's log-probability). digamma and polygamma shift x up by their recurrences
until it is large, then sum their asymptotic series in float64; that reaches float64's
accuracy for x >= 10 with the terms below. Values at the poles are PyTorch's: lgamma
+inf at 0, -1, -2, ...; digamma -inf at 0 and NaN at the negative integers; polygamma
+inf at the non-positive integers for odd n, NaN for even n.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.function import Function


def _lgamma_one(v: float) -> float:
    try:
        return math.lgamma(v)
    except ValueError:  # a pole: 0, -1, -2, ...
        return math.inf


_LGAMMA = np.frompyfunc(_lgamma_one, 1, 1)
# Bernoulli numbers B2, B4, ..., B20: the asymptotic series' coefficients
_B2K = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
        43867 / 798, -174611 / 330]
_LARGE = 10.0  # shift x at least this far before the series


def _out_dtype(x: Any) -> np.dtype:
    return np.result_type(x, np.float32)


def lgamma_array(x: Any) -> Any:
    """log |Gamma(x)|."""
    x = np.asarray(x)
    # frompyfunc returns objects, and a bare float for a 0-d input
    return np.asarray(_LGAMMA(x.astype(np.float64)), np.float64).astype(_out_dtype(x))


def _shifted(x: np.ndarray, term: Any) -> tuple[np.ndarray, np.ndarray]:
    """x moved up to at least _LARGE by steps of 1, and the sum of term(x + k) over the
    steps taken (the recurrence's correction)."""
    x = x.copy()
    total = np.zeros_like(x)
    while True:
        low = x < _LARGE
        if not low.any():
            return x, total
        with np.errstate(divide="ignore", over="ignore"):  # x near 0: the value is inf
            total[low] += term(x[low])
        x[low] += 1


def digamma_array(x: Any) -> Any:
    """The derivative of lgamma; for x < 0, by the reflection psi(1 - x) - pi / tan(pi x)."""
    x = np.asarray(x)
    v = x.astype(np.float64)
    negative = v < 0
    w = np.where(negative, 1 - v, v)
    w = np.where(np.isfinite(w) & (w != 0), w, _LARGE)  # the poles and infinities: below
    w, correction = _shifted(w, lambda a: 1 / a)
    inv2 = 1 / (w * w)
    series = np.zeros_like(w)
    for k in reversed(range(len(_B2K))):
        series = (series + _B2K[k] / (2 * (k + 1))) * inv2
    psi = np.log(w) - 0.5 / w - series - correction
    with np.errstate(divide="ignore", invalid="ignore"):
        psi = np.where(negative, psi - math.pi / np.tan(math.pi * v), psi)
    whole = (v <= 0) & (v == np.floor(v))
    psi = np.where(whole, np.where(v == 0, np.copysign(np.inf, -v), np.nan), psi)
    psi = np.where(np.isposinf(v), np.inf, np.where(np.isnan(v) | np.isneginf(v), np.nan, psi))
    return psi.astype(_out_dtype(x))


def polygamma_array(n: int, x: Any) -> Any:
    """The n-th derivative of digamma (n >= 1): (-1)^(n+1) n! zeta(n + 1, x), summed as
    x is shifted up, then by its asymptotic series."""
    if n == 0:
        return digamma_array(x)
    x = np.asarray(x)
    v = x.astype(np.float64)
    whole = (v <= 0) & (v == np.floor(v))
    w, correction = _shifted(np.where(np.isfinite(v) & ~whole, v, _LARGE),
                             lambda a: 1 / a ** (n + 1))
    # zeta(n+1, w) ~ 1/(n w^n) + 1/(2 w^(n+1)) + sum B2k (2k+n-1)!/((2k)! n!) / w^(2k+n)
    with np.errstate(over="ignore"):  # w ** n past float64: a zero term
        series = 1 / (n * w ** n) + 0.5 / w ** (n + 1)
    coeff = 1.0  # (2k+n-1)! / ((2k)! n!) built term by term
    power = w ** (n + 2)
    for k, b in enumerate(_B2K, start=1):
        coeff *= (2 * k + n - 1) * (2 * k + n - 2) / ((2 * k) * (2 * k - 1)) if k > 1 \
            else (n + 1) / 2
        series = series + b * coeff / power
        power = power * w * w
    sign = 1 if n % 2 else -1
    out = sign * math.factorial(n) * (series + correction)
    out = np.where(whole, sign * np.inf, out)
    # PyTorch's values at the infinities: its trigamma's limits, and NaN / the poles' sign
    # from the zeta form it uses for n >= 2
    at_inf = (0.0, np.nan) if n == 1 else (np.nan, sign * np.inf)
    out = np.where(np.isposinf(v), at_inf[0], np.where(np.isneginf(v), at_inf[1], out))
    out = np.where(np.isnan(v), np.nan, out)
    return out.astype(_out_dtype(x))


class Polygamma(Function):
    """polygamma(n, x); its derivative is polygamma(n + 1, x)."""

    def __init__(self, n: int) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise RuntimeError(f"polygamma: n must be a non-negative integer; got {n!r}")
        self.n = n

    def forward(self, x: Any) -> Any:
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return polygamma_array(self.n, x)

    def backward(self, gy: Any) -> Any:
        (x,) = self.saved_tensors
        return (gy * polygamma_array(self.n + 1, x)).astype(gy.dtype, copy=False)
