"""Gamma, Beta and Dirichlet rsample by implicit reparameterisation: dx/dalpha of a gamma
draw against central differences of SciPy's regularised incomplete gamma function and
against PyTorch's approximation of it, and the gradients of expectations they give."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.distributions as D
from lamina.distributions.implicit import standard_gamma_grad

special = pytest.importorskip("scipy.special")

ALPHA = np.array([0.01, 0.3, 0.9, 1.0, 2.5, 7.0, 30.0, 400.0])


def _quantiles(alpha):
    """Draws at the 0.1%, 10%, 50%, 90% and 99.9% quantiles of each alpha: (len, 5)."""
    q = np.array([1e-3, 0.1, 0.5, 0.9, 0.999])
    return special.gammaincinv(alpha[:, None], q[None, :])


def test_the_gradient_of_a_draw_is_the_incomplete_gamma_functions_implicit_derivative():
    alpha = np.repeat(ALPHA[:, None], 5, 1)
    x = _quantiles(ALPHA)
    h = 1e-5 * alpha
    dF = (special.gammainc(alpha + h, x) - special.gammainc(alpha - h, x)) / (2 * h)
    density = np.exp(-x + (alpha - 1) * np.log(x) - special.gammaln(alpha))
    np.testing.assert_allclose(standard_gamma_grad(x, alpha), -dF / density, rtol=2e-6)
    assert standard_gamma_grad(0.0, 2.0) == 0.0


def test_it_agrees_with_pytorchs_approximation():
    torch = pytest.importorskip("torch")
    alpha = np.repeat(ALPHA[:, None], 5, 1)
    x = _quantiles(ALPHA)
    theirs = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(standard_gamma_grad(x, alpha), theirs, rtol=2e-3, atol=1e-12)


@pytest.mark.parametrize("kind", ["Gamma", "Beta", "Dirichlet"])
def test_rsample_gives_the_gradient_of_the_mean(kind):
    """d/da of E[x] from 200000 draws' mean: 1 / rate for Gamma(a, rate), b / (a + b)^2
    for Beta(a, b), and (a_1, -a_0) / total^2 for a Dirichlet's first coordinate."""
    lm.manual_seed(0)
    a = lm.tensor([0.7, 3.0], dtype=lm.float64, requires_grad=True)
    b = lm.tensor([2.0, 0.5], dtype=lm.float64, requires_grad=True)
    if kind == "Gamma":
        d, expected = D.Gamma(a, b), 1 / b.detach().numpy()
    elif kind == "Beta":
        d = D.Beta(a, b)
        expected = (b / (a + b) ** 2).detach().numpy()
    else:
        d = D.Dirichlet(a)
        expected = np.array([a[1].item(), -a[0].item()]) / a.sum().item() ** 2
    assert d.has_rsample
    draws = d.rsample((200000,))
    (draws[:, 0] if kind == "Dirichlet" else draws).mean(0).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=0.03)


def test_gamma_and_chi2_cdf_are_pytorchs():
    torch = pytest.importorskip("torch")
    a, rate = np.array([2.0, 0.5, 9.0]), np.array([1.0, 3.0, 0.5])
    value = np.array([1.5, 0.2, 30.0])
    ours = D.Gamma(lm.tensor(a), lm.tensor(rate)).cdf(lm.tensor(value)).numpy()
    theirs = torch.distributions.Gamma(torch.tensor(a), torch.tensor(rate)).cdf(
        torch.tensor(value)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    np.testing.assert_allclose(D.Chi2(lm.tensor(a)).cdf(lm.tensor(value)).numpy(),
                               torch.distributions.Chi2(torch.tensor(a)).cdf(
                                   torch.tensor(value)).numpy(), rtol=1e-9)
