"""lamina.fused.numba_math: the vectorizable float32 exp and softplus the compiled kernels
inline, over the whole float32 range, under the kernels' own fastmath flags."""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")


def _looped(name):
    """numba_math's scalar function `name` in a loop compiled here (not cached: each name
    gets its own loop) with the kernels' flags, as the kernels call it: x -> y."""
    import numba

    from lamina.fused import numba_math

    scalar = getattr(numba_math, name)

    @numba.njit(nogil=True, fastmath=numba_math.FASTMATH, error_model="numpy")
    def each(x, y):  # type: ignore[no-untyped-def]
        for i in range(x.size):
            y[i] = scalar(x[i])

    def run(x):
        y = np.empty_like(x)
        each(x, y)
        return y

    run.dispatcher = each
    return run


@pytest.fixture(scope="module")
def exp_kernel():
    return _looped("exp32")


@pytest.fixture(scope="module")
def softplus_kernel():
    return _looped("softplus32")


def _every_finite_float32(step=61):
    """Every `step`-th float32 bit pattern that is finite: both signs, subnormals to the
    largest, about 70 million values."""
    bits = np.arange(0, 2**32, step, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    return x[np.isfinite(x)]


def test_exp_is_within_3_ulp_of_the_exact_value_over_the_float32_range(exp_kernel):
    x = _every_finite_float32()
    y = exp_kernel(x)
    with np.errstate(over="ignore", under="ignore"):
        exact = np.exp(x.astype(np.float64))
    normal = (exact >= np.finfo(np.float32).tiny) & (exact <= np.finfo(np.float32).max)
    rel = np.abs(y[normal] - exact[normal]) / exact[normal]
    assert rel.max() < 4e-7, x[normal][rel.argmax()]
    tiny = exact < np.finfo(np.float32).tiny
    # subnormal results: within a few of the smallest subnormal (1.4e-45)
    assert np.abs(y[tiny] - exact[tiny]).max() <= 4 * np.finfo(np.float32).smallest_subnormal
    big = exact > np.finfo(np.float32).max
    assert np.all(np.isposinf(y[big]))


def test_exp_keeps_numpys_special_values(exp_kernel):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72, 88.723, -87.3, -104.0,
                  -1e30, 1e30, 1.0], np.float32)
    y = exp_kernel(x)
    with np.errstate(over="ignore"):
        want = np.exp(x)
    assert np.isnan(y[0])
    np.testing.assert_array_equal(y[1:3], [np.inf, 0.0])
    np.testing.assert_array_equal(y[3:5], [1.0, 1.0])
    assert np.isfinite(y[5]) and abs(y[5] / want[5] - 1) < 4e-7
    assert np.isposinf(y[6]) and y[8] == 0.0 and y[9] == 0.0 and np.isposinf(y[10])
    assert abs(y[7] / want[7] - 1) < 4e-7 and abs(y[11] / np.e - 1) < 4e-7


@pytest.mark.parametrize("name", ["exp32", "softplus32", "tanh32", "sigmoid32"])
def test_loops_calling_them_are_vectorized(name):
    """Their point: a loop that calls one runs in SIMD registers, not a libm call an
    element. The machine code of the loop compiled here shows it."""
    x = np.ones(64, np.float32)
    run = _looped(name)
    run(x)
    asm = "".join(run.dispatcher.inspect_asm().values())
    assert re.search(r"\b(ymm|zmm)\d+", asm) or re.search(r"\bv\w+ps\s+%xmm", asm)
    assert not re.search(r"\b(expf|logf|log1pf)\b", asm)


def test_softplus_is_within_5e_7_of_the_exact_value_over_the_float32_range(softplus_kernel):
    x = _every_finite_float32()
    y = softplus_kernel(x)
    exact = np.logaddexp(0.0, x.astype(np.float64))
    normal = exact >= np.finfo(np.float32).tiny
    rel = np.abs(y[normal] - exact[normal]) / exact[normal]
    # exp32's 4e-7 where softplus(x) ~ e^x, a few float32 roundings elsewhere
    assert rel.max() < 5e-7, x[normal][rel.argmax()]
    tiny = ~normal
    assert np.abs(y[tiny] - exact[tiny]).max() <= 4 * np.finfo(np.float32).smallest_subnormal


def test_softplus_keeps_the_special_values(softplus_kernel):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 20.0, -20.0], np.float32)
    y = softplus_kernel(x)
    assert np.isnan(y[0]) and np.isposinf(y[1]) and y[2] == 0.0 and y[6] == 0.0
    np.testing.assert_allclose(y[3:5], np.log(2.0), rtol=1e-7)
    assert y[5] == np.float32(1e30) and y[7] == np.float32(20.0)
    assert abs(y[8] / np.exp(-20.0) - 1) < 4e-7


@pytest.mark.parametrize("name, exact, bound", [
    ("tanh32", np.tanh, 2e-7),
    # where sigmoid(x) ~ e^x, exp32's own bound
    ("sigmoid32", lambda x: np.exp(-np.logaddexp(0.0, -x)), 4e-7),
])
def test_tanh_and_sigmoid_are_close_to_the_exact_value_over_the_float32_range(
        name, exact, bound):
    """The threaded LSTM step's activations (numba_threaded.py)."""
    x = _every_finite_float32()
    y = _looped(name)(x)
    want = exact(x.astype(np.float64))
    normal = np.abs(want) >= np.finfo(np.float32).tiny
    rel = np.abs(y[normal] - want[normal]) / np.abs(want[normal])
    assert rel.max() < bound, x[normal][rel.argmax()]
    # below the normal range, sigmoid is 0 where e^-x overflows: off by a subnormal at most
    assert np.abs(y[~normal] - want[~normal]).max() < np.finfo(np.float32).tiny


def test_tanh_and_sigmoid_keep_the_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 0.4999, 0.5], np.float32)
    t, s = _looped("tanh32")(x), _looped("sigmoid32")(x)
    assert np.isnan(t[0]) and np.isnan(s[0])
    np.testing.assert_array_equal(t[1:7], [1.0, -1.0, 0.0, -0.0, 1.0, -1.0])
    np.testing.assert_array_equal(s[1:7], [1.0, 0.0, 0.5, 0.5, 1.0, 0.0])
    # both sides of the switch from the polynomial to the exponential form
    np.testing.assert_allclose(t[7:], np.tanh(x[7:].astype(np.float64)), rtol=2e-7)
