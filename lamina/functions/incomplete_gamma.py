"""The regularised incomplete gamma functions P(a, x) and Q(a, x) = 1 - P (PyTorch's
special.gammainc and gammaincc, differentiable in x as PyTorch's are), and the Hurwitz
zeta function. SciPy's where it is installed; else P by its series below x = a + 1 and Q
by its continued fraction above (each where it converges fast), and zeta by
Euler-Maclaurin summation."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.functions._util import sum_to
from lamina.functions.error_functions import scipy_special
from lamina.functions.gamma import lgamma_array

_TINY = 1e-300
# B_2j / (2j)!, the Euler-Maclaurin corrections
_B2J_OVER_FACTORIAL = [1 / 12, -1 / 720, 1 / 30240, -1 / 1209600, 1 / 47900160,
                       -691 / 1307674368000, 1 / 74724249600]


def _lower_and_upper(a: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p, q = np.full(x.shape, np.nan), np.full(x.shape, np.nan)
    ok = (a > 0) & (x >= 0)
    with np.errstate(divide="ignore"):
        prefix = np.exp(np.where(ok & (x > 0), a * np.log(np.where(x > 0, x, 1)) - x
                                 - lgamma_array(np.where(ok, a, 1)), -np.inf))
    series = ok & (x < a + 1)
    s_a, s_x = a[series], x[series]
    term = 1 / s_a
    total = term.copy()
    for n in range(1, 1000):
        term = term * s_x / (s_a + n)
        total += term
        if np.all(term <= 1e-17 * total):
            break
    p[series] = total * prefix[series]
    q[series] = 1 - p[series]
    fraction = ok & ~series  # Lentz's method on Q's continued fraction
    f_a, f_x = a[fraction], x[fraction]
    b = f_x + 1 - f_a
    c = np.full(b.shape, 1 / _TINY)
    d = 1 / b
    h = d.copy()
    for i in range(1, 1000):
        an = -i * (i - f_a)
        b = b + 2
        d = an * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1 / d
        delta = d * c
        h = h * delta
        if np.all(np.abs(delta - 1) < 1e-16):
            break
    q[fraction] = h * prefix[fraction]
    p[fraction] = 1 - q[fraction]
    return p, q


def gammainc_array(a: Any, x: Any, upper: bool = False) -> np.ndarray:
    """P(a, x), or Q(a, x) where `upper`, in float64; NaN outside a > 0, x >= 0."""
    a, x = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    sp = scipy_special()
    if sp is not None:
        return (sp.gammaincc if upper else sp.gammainc)(a, x)
    p, q = _lower_and_upper(a, x)
    return q if upper else p


class IncompleteGamma(Function):
    """P(a, x) or Q(a, x); the derivative in x is +-x^(a-1) e^-x / Gamma(a), and in a,
    as in PyTorch, there is none."""

    def __init__(self, upper: bool) -> None:
        self.upper = upper

    def forward(self, a: Any, x: Any) -> Any:
        self.save_for_backward(a, x)
        return gammainc_array(a, x, self.upper).astype(np.result_type(a, x))

    def backward(self, gy: Any) -> tuple[Any, Any]:
        if self.needs_input_grad[0]:
            name = "gammaincc" if self.upper else "gammainc"
            raise NotImplementedError(f"{name}: no gradient in its first argument (a), as "
                                      f"in PyTorch; detach it")
        a, x = self.saved_tensors
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            density = np.exp((a - 1) * np.log(x) - x - lgamma_array(a))
        d = -density if self.upper else density
        return None, sum_to(gy * d, x.shape).astype(gy.dtype)


def zeta_array(s: Any, q: Any) -> np.ndarray:
    """The Hurwitz zeta function sum_k (k + q)^-s, in float64: inf at s = 1, NaN below
    or for q <= 0 (SciPy's conventions where SciPy is absent; SciPy's values otherwise)."""
    s, q = np.broadcast_arrays(np.asarray(s, np.float64), np.asarray(q, np.float64))
    sp = scipy_special()
    if sp is not None:
        return sp.zeta(s, q)
    n = 10
    ok = (s > 1) & (q > 0)
    s1, q1 = np.where(ok, s, 2.0), np.where(ok, q, 1.0)
    total = sum((q1 + k) ** -s1 for k in range(n))
    tail = q1 + n
    total = total + tail ** (1 - s1) / (s1 - 1) + 0.5 * tail ** -s1
    rising, power = s1.copy(), tail ** (-s1 - 1)
    for j, coeff in enumerate(_B2J_OVER_FACTORIAL):
        total = total + coeff * rising * power
        rising = rising * (s1 + 2 * j + 1) * (s1 + 2 * j + 2)
        power = power / (tail * tail)
    return np.where(ok, total, np.where(s == 1, np.inf, np.nan))
