"""The rest of torch.special against PyTorch: values over the range and into the tails,
gradients where PyTorch has them (and central differences for lamina's own), the
orthogonal polynomials over degrees and arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lamina
from lamina import special

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

X = np.concatenate([np.linspace(-45, 45, 181), [0.0, 1e-6, 29.9, 30.1, 300.0]])


@pytest.mark.parametrize("name, differentiable", [
    ("i0", True), ("i0e", True), ("i1", True), ("i1e", True), ("erfcx", True),
    ("log_ndtr", True), ("erfc", True), ("modified_bessel_i0", False),
    ("modified_bessel_i1", False), ("spherical_bessel_j0", False), ("bessel_j0", False),
    ("bessel_j1", False), ("bessel_y0", False), ("bessel_y1", False),
    ("modified_bessel_k0", False), ("modified_bessel_k1", False),
    ("scaled_modified_bessel_k0", False), ("scaled_modified_bessel_k1", False),
    ("airy_ai", False)])
def test_a_special_function_is_pytorchs(name, differentiable) -> None:
    pytest.importorskip("scipy")
    x = X if "bessel_y" not in name and "_k" not in name else np.abs(X) + 0.01
    tx, lx = torch.tensor(x, requires_grad=True), lamina.tensor(x, requires_grad=True)
    theirs, ours = getattr(torch.special, name)(tx), getattr(special, name)(lx)
    t, o = theirs.detach().numpy(), ours.detach().numpy()
    assert np.array_equal(np.isfinite(t), np.isfinite(o)), name
    finite = np.isfinite(t)
    # PyTorch's own J, Y and Ai are good to about 1e-7 (lamina's are SciPy's)
    atol = 1e-6 if name.startswith(("bessel_", "airy")) else 1e-300
    np.testing.assert_allclose(o[finite], t[finite], rtol=1e-10, atol=atol)
    if differentiable:
        theirs.sum().backward()
        ours.sum().backward()
        g = tx.grad.numpy()
        np.testing.assert_allclose(lx.grad.numpy()[np.isfinite(g)], g[np.isfinite(g)],
                                   rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "erfcx", "log_ndtr", "erfc",
                                  "spherical_bessel_j0"])
def test_gradients_match_central_differences(name) -> None:
    # past |x| = 30 the scaled functions take their asymptotic series
    big = 31.5 if name.endswith("e") or name in ("erfcx", "log_ndtr") else 4.0
    x = lamina.tensor(np.array([-3.1, -0.4, 0.7, 2.2, big]), requires_grad=True)
    assert lamina.autograd.gradcheck(getattr(special, name), (x,))


def test_the_tails_keep_their_digits() -> None:
    """erfc, ndtr and log_ndtr where 1 - erf and log(ndtr) would give 0 and -inf."""
    x = lamina.tensor([10.0, 26.0], dtype=lamina.float64)
    np.testing.assert_allclose(special.erfc(x).numpy(), [math.erfc(10), math.erfc(26)],
                               rtol=1e-13)
    np.testing.assert_allclose(special.ndtr(-x).numpy(), [math.erfc(10 / math.sqrt(2)) / 2,
                                                          math.erfc(26 / math.sqrt(2)) / 2],
                               rtol=1e-13)
    assert np.isfinite(special.log_ndtr(-x * 10).numpy()).all()


def test_incomplete_gamma_and_zeta_are_pytorchs() -> None:
    a = np.array([0.01, 0.5, 1.0, 2.5, 10.0, 100.0])[:, None]
    x = np.array([0.0, 1e-5, 0.3, 1.0, 3.0, 9.0, 11.0, 120.0])[None, :]
    A, X2 = np.broadcast_arrays(a, x)
    for name in ("gammainc", "gammaincc"):
        tx = torch.tensor(X2, requires_grad=True)
        lx = lamina.tensor(X2, requires_grad=True)
        theirs = getattr(torch.special, name)(torch.tensor(A), tx)
        ours = getattr(special, name)(lamina.tensor(A), lx)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-9)
        theirs.sum().backward()
        ours.sum().backward()
        g = tx.grad.numpy()
        finite = np.isfinite(g)
        np.testing.assert_allclose(lx.grad.numpy()[finite], g[finite], rtol=1e-9)
    with pytest.raises(NotImplementedError, match="no gradient in its first argument"):
        special.gammainc(lamina.tensor([1.0], requires_grad=True),
                         lamina.tensor([1.0])).sum().backward()
    s, q = np.broadcast_arrays(np.array([1.5, 2.0, 3.7, 10.0, 1.0, 0.5])[:, None],
                               np.array([0.1, 1.0, 2.5, 30.0])[None, :])
    theirs = torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy()
    ours = special.zeta(lamina.tensor(s), lamina.tensor(q)).numpy()
    assert np.array_equal(np.isfinite(ours), np.isfinite(theirs))
    np.testing.assert_allclose(ours[np.isfinite(ours)], theirs[np.isfinite(theirs)],
                               rtol=1e-12)


@pytest.mark.parametrize("name", [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p"])
def test_orthogonal_polynomials_are_pytorchs(name) -> None:
    x, n = np.meshgrid(np.linspace(-2.5, 2.5, 21), np.array([-1, 0, 1, 2, 3, 5, 8, 12]))
    theirs = getattr(torch.special, name)(torch.tensor(x), torch.tensor(n)).numpy()
    ours = getattr(special, name)(lamina.tensor(x), lamina.tensor(n)).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-10)
    single = getattr(special, name)(lamina.tensor([0.5], dtype=lamina.float32), 3)
    assert single.dtype == lamina.float32
