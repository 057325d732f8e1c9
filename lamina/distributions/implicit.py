"""Reparameterised gamma draws (implicit reparameterisation, Figurnov et al., 2018), the
rsample of Gamma, Beta and Dirichlet as in PyTorch.

A draw x ~ Gamma(alpha, 1) has no closed form in alpha, but held at its quantile
F(x; alpha) = u it moves with alpha as dx/dalpha = -(dF/dalpha) / density(x). Here dF/dalpha
is the series of the regularised lower incomplete gamma function, differentiated term by
term: exact to float64 rounding wherever draws land (far in the upper tail, beyond any
realistic draw, its terms cancel and it loses digits). PyTorch approximates the same
derivative piecewise; the two agree to its approximation's accuracy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions.gamma import digamma_array
from lamina.random import numpy_rng


def standard_gamma_grad(x: Any, alpha: Any) -> np.ndarray:
    """d x / d alpha of standard gamma draws x of concentration alpha (arrays that
    broadcast), in float64; 0 where x is 0.

    Examples:
        >>> from lamina.distributions.implicit import standard_gamma_grad
        >>> float(standard_gamma_grad(1.5, 2.0).round(4))
        0.9366
    """
    x, alpha = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(alpha, np.float64))
    out = np.zeros(x.shape)
    inside = x > 0
    xs, a = x[inside], alpha[inside]
    if xs.size == 0:
        return out
    log_x = np.log(xs)
    # P(a, x) = sum_n exp(-x) x^(a + n) / Gamma(a + n + 1); term n over the density is c_n,
    # c_0 = x / a, c_(n+1) = c_n x / (a + n + 1), and d term_n / d a = term_n (log x -
    # psi(a + n + 1)).
    c = xs / a
    psi = digamma_array(a + 1)
    total = c * (log_x - psi)
    rising = float(np.max(xs - a))  # terms grow while a + n + 1 < x, then fall off
    for n in range(int(max(rising, 0) + 12 * np.sqrt(np.max(xs)) + 60)):
        k = a + n + 1
        psi = psi + 1 / k
        c = c * xs / k
        term = c * (log_x - psi)
        total += term
        if n > rising and np.all(np.abs(term) <= 1e-17 * np.abs(total)):
            break
    out[inside] = -total
    return out


class StandardGamma(Function):
    """Draws of Gamma(alpha, 1), one per element of alpha; their gradient in alpha by
    implicit reparameterisation."""

    def forward(self, alpha: Any) -> Any:
        x = numpy_rng().gamma(alpha).astype(alpha.dtype)
        self.save_for_backward(x, alpha)
        return x

    def backward(self, gy: Any) -> Any:
        x, alpha = self.saved_tensors
        return (gy * standard_gamma_grad(x, alpha)).astype(gy.dtype)


def standard_gamma(alpha: Tensor) -> Tensor:
    """Gamma(alpha, 1) draws, differentiable in alpha (PyTorch's torch._standard_gamma).

    Examples:
        >>> from lamina.distributions.implicit import standard_gamma
        >>> alpha = lm.tensor([2.0, 5.0], requires_grad=True)
        >>> standard_gamma(alpha).sum().backward(); alpha.grad.shape
        lamina.Size([2])
    """
    return StandardGamma().apply(alpha)
