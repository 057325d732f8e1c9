"""At their domain edges (log(0), sqrt(-1), atanh(1), 1/0, 0 ** -1) PyTorch's ops give inf
and NaN silently; so do lamina's, with the same values and gradients. The test suite
turns warnings into errors, so a NumPy RuntimeWarning fails here. (Arithmetic on the
infinities themselves, inf - inf in a sum, still lets NumPy warn: see the guide.)"""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")

EDGES = [0.0, -1.0, 1.0, -0.0, 2.0]
OPS = ["log", "sqrt", "rsqrt", "log2", "log10", "log1p", "reciprocal", "atanh", "asin",
       "acos", "lgamma"]


@pytest.mark.parametrize("op", OPS)
def test_an_op_at_its_domain_edge_is_quiet_and_pytorchs(op):
    xl = lm.tensor(EDGES, dtype=lm.float64, requires_grad=True)
    xt = torch.tensor(EDGES, dtype=torch.float64, requires_grad=True)
    a, b = getattr(xl, op)(), getattr(xt, op)()
    # The same infinities and NaNs; finite values to the last bit but one (the libraries'
    # float64 logs differ by one in the last place on some CPUs).
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=4e-16, atol=0)
    a.backward(lm.ones_like(a)), b.backward(torch.ones_like(b))
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("exponent", [-1.0, 0.5, -0.5, 3.0])
def test_powers_at_zero_and_below_are_quiet_and_pytorchs(exponent):
    edges = [0.0, -1.0, 1.0, 2.0]  # not -0.0: PyTorch's x ** -0.5 there is -inf, C's +inf
    xl = lm.tensor(edges, dtype=lm.float64, requires_grad=True)
    xt = torch.tensor(edges, dtype=torch.float64, requires_grad=True)
    a, b = xl ** exponent, xt ** exponent
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-15)
    a.backward(lm.ones_like(a)), b.backward(torch.ones_like(b))
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
