"""erfc, erfcx (e^(x^2) erfc(x)) and log_ndtr (log of the standard normal CDF), accurate
in the tails where 1 - erf(x) and log(ndtr(x)) lose every digit: SciPy's where it is
installed (imported at the first call, not by `import lamina`), else the standard
library's erfc an element at a time, and the asymptotic series of erfcx past where
e^(x^2) overflows."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

_SQRT_PI = math.sqrt(math.pi)
# Past here e^(x^2) overflows float64; erfcx's asymptotic series is exact to rounding.
_ASYMPTOTIC_FROM = 26.0


def scipy_special() -> Any:
    """scipy.special where SciPy is installed (imported at the first call), else None."""
    try:
        import scipy.special
    except ImportError:  # pragma: no cover - depends on the machine
        return None
    return scipy.special


def erfc_array(x: Any) -> np.ndarray:
    """erfc(x) in x's float dtype, to its relative accuracy in the right tail."""
    x = np.asarray(x)
    sp = scipy_special()
    out = sp.erfc(x.astype(np.float64)) if sp is not None else np.vectorize(
        math.erfc, otypes=[np.float64])(x)
    return out.astype(x.dtype, copy=False)


def _erfcx64(x: np.ndarray) -> np.ndarray:
    sp = scipy_special()
    if sp is not None:
        return sp.erfcx(x)
    out = np.empty_like(x)
    far = x >= _ASYMPTOTIC_FROM
    near = ~far
    with np.errstate(over="ignore", invalid="ignore"):  # x far below 0: inf, as PyTorch's
        out[near] = np.exp(x[near] ** 2) * np.vectorize(math.erfc, otypes=[np.float64])(
            x[near])
    v = x[far]
    term, total = np.ones_like(v), np.ones_like(v)
    for k in range(1, 12):  # 1/(x sqrt(pi)) sum_k (-1)^k (2k - 1)!! / (2 x^2)^k
        term = -term * (2 * k - 1) / (2 * v * v)
        total += term
    out[far] = total / (v * _SQRT_PI)
    return out


def erfcx_array(x: Any) -> np.ndarray:
    """e^(x^2) erfc(x) in x's float dtype (inf where x is far below 0)."""
    x = np.asarray(x)
    return _erfcx64(x.astype(np.float64)).astype(x.dtype, copy=False)


def log_ndtr_array(x: Any) -> np.ndarray:
    """log(Phi(x)): through erfcx in the left tail (Phi = erfcx(-x / sqrt 2) e^(-x^2/2)
    / 2), through log1p in the right, where Phi is within rounding of 1."""
    x = np.asarray(x)
    sp = scipy_special()
    v = x.astype(np.float64)
    if sp is not None:
        return sp.log_ndtr(v).astype(x.dtype, copy=False)
    t = -v / math.sqrt(2)
    with np.errstate(divide="ignore"):
        left = np.log(0.5 * _erfcx64(t)) - v * v / 2
        right = np.log1p(-0.5 * erfc_array(-t))
    return np.where(v < 0, left, right).astype(x.dtype, copy=False)


def log_ndtr_grad(x: Any) -> np.ndarray:
    """d/dx log(Phi(x)) = phi(x) / Phi(x) = sqrt(2 / pi) / erfcx(-x / sqrt 2)."""
    v = np.asarray(x, np.float64)
    return math.sqrt(2 / math.pi) / _erfcx64(-v / math.sqrt(2))
