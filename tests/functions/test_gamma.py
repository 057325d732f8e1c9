"""The gamma family: values at known points, against the C library's lgamma and against
PyTorch over a wide range, and gradients against float64 central differences."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lamina as lm
from lamina.autograd import gradcheck
from lamina.functions.gamma import digamma_array, lgamma_array, polygamma_array

EULER = 0.5772156649015329
ZETA3 = 1.2020569031595942
GRID = np.concatenate([np.linspace(-7.25, 40.0, 379), [1e-6, 0.5, 1.0, 2.0, 1e3, 1e6]])


def test_values_at_known_points():
    assert lgamma_array(np.array([0.5]))[0] == pytest.approx(math.log(math.sqrt(math.pi)))
    assert digamma_array(np.array([1.0]))[0] == pytest.approx(-EULER, rel=1e-14)
    assert digamma_array(np.array([0.5]))[0] == pytest.approx(-EULER - 2 * math.log(2),
                                                               rel=1e-14)
    assert polygamma_array(1, np.array([1.0]))[0] == pytest.approx(math.pi ** 2 / 6, rel=1e-14)
    assert polygamma_array(2, np.array([1.0]))[0] == pytest.approx(-2 * ZETA3, rel=1e-14)
    assert polygamma_array(3, np.array([0.5]))[0] == pytest.approx(math.pi ** 4, rel=1e-13)


def test_a_zero_dimensional_input_gives_a_zero_dimensional_array():
    for fn in (lgamma_array, digamma_array, lambda x: polygamma_array(2, x)):
        out = fn(np.array(2.5))
        assert isinstance(out, np.ndarray) and out.shape == ()
    assert lm.tensor(4.0).lgamma().item() == pytest.approx(math.log(6))


def test_lgamma_is_the_c_librarys_and_keeps_the_dtype():
    want = [math.lgamma(v) for v in GRID if not (v <= 0 and v == math.floor(v))]
    got = lgamma_array(GRID[~((GRID <= 0) & (np.floor(GRID) == GRID))])
    np.testing.assert_array_equal(got, want)
    assert lgamma_array(GRID.astype(np.float32)).dtype == np.float32


def test_digamma_is_lgammas_derivative_and_polygamma_digammas():
    x = GRID[(GRID > 0.05) & (GRID < 1e3)]
    h = 1e-5
    slope = (lgamma_array(x + h) - lgamma_array(x - h)) / (2 * h)
    np.testing.assert_allclose(digamma_array(x), slope, rtol=1e-6, atol=1e-6)
    for n in (1, 2, 3):
        slope = (polygamma_array(n - 1, x + h) - polygamma_array(n - 1, x - h)) / (2 * h)
        np.testing.assert_allclose(polygamma_array(n, x), slope, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [0, 1, 2, 5])
def test_polygamma_matches_pytorch_over_a_wide_range(n):
    torch = pytest.importorskip("torch")
    x = np.concatenate([GRID[(np.floor(GRID) != GRID) | (GRID > 0)], [np.nan, np.inf]])
    want = torch.polygamma(n, torch.tensor(x)).numpy()
    # PyTorch's trigamma is good to about 1e-9; ours sums to float64's accuracy
    np.testing.assert_allclose(polygamma_array(n, x), want, rtol=1e-8, atol=1e-12)


GRADIENT_CASES = {
    "lgamma": lambda x: x.lgamma(), "digamma": lambda x: x.digamma(),
    "trigamma": lambda x: x.polygamma(1), "polygamma2": lambda x: x.polygamma(2),
    "polygamma3": lambda x: lm.polygamma(3, x), "mvlgamma": lambda x: (x + 3).mvlgamma(3),
    "multigammaln": lambda x: lm.special.multigammaln(x + 3, 2),
}


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_gradients_match_central_differences(name):
    x = np.random.default_rng(0).uniform(0.2, 6.0, (3, 4))
    x[0, :2] = [-1.5, -0.25]  # negative, off the poles
    assert gradcheck(GRADIENT_CASES[name], [lm.tensor(x)])


def test_polygamma_refuses_a_negative_order():
    with pytest.raises(RuntimeError, match="polygamma: n"):
        lm.tensor([1.0]).polygamma(-1)
