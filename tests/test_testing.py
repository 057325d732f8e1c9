"""lamina.testing.assert_close against torch.testing's: the same inputs pass or fail
alike, with the same message; make_tensor's ranges; fork_rng restores the generator."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.testing

torch = pytest.importorskip("torch")

CASES = [
    ([1.0, 2.0, 3.0], [1.0, 2.0 + 1e-6, 3.0], np.float32, {}),
    ([1.0, 2.0, 3.0], [1.0, 2.5, 3.0], np.float32, {}),
    ([1.0, 2.0], [1.0, 2.0 + 1e-6], np.float64, {}),
    ([[1.0, 2.0], [3.0, 4.0]], [[1.1, 2.0], [3.0, 4.4]], np.float32, {}),
    ([1.0, 2.0], [1.05, 2.0], np.float32, {"rtol": 0.1, "atol": 0.0}),
    ([1.0, float("nan")], [1.0, float("nan")], np.float64, {}),
    ([1.0, float("nan")], [1.0, float("nan")], np.float64, {"equal_nan": True}),
    ([1.0, float("inf")], [1.0, float("inf")], np.float32, {}),
    ([1, 2, 3], [1, 2, 4], np.int64, {}),
    (1.0, 1.5, np.float32, {}),
    ([1.0], [1.0, 2.0], np.float32, {}),
    ([1.0, 2.0], [1.0, 2.5], np.float32, {"rtol": 0.0, "atol": 0.0}),
    (1, 2, np.int64, {}),
]


def _outcome(lib, a, e, dtype, kw):
    make = (lambda v: torch.tensor(np.asarray(v, dtype))) if lib is torch else \
        (lambda v: lm.tensor(np.asarray(v, dtype)))
    try:
        lib.testing.assert_close(make(a), make(e), **kw)
    except AssertionError as error:
        return str(error).replace("torch.", "lamina.")
    return None


@pytest.mark.parametrize("a, e, dtype, kw", CASES)
def test_assert_close_passes_and_fails_as_pytorchs_with_its_message(a, e, dtype, kw):
    assert _outcome(lm, a, e, dtype, kw) == _outcome(torch, a, e, dtype, kw)


def test_assert_close_checks_dtypes_and_nested_containers():
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        lamina.testing.assert_close(lm.ones(1), lm.ones(1, dtype=lm.float64))
    lamina.testing.assert_close({"a": [lm.ones(2)]}, {"a": [lm.ones(2)]})
    with pytest.raises(AssertionError):
        lamina.testing.assert_close({"a": [lm.ones(2)]}, {"a": [lm.zeros(2)]})
    with pytest.raises(ValueError, match="both 'rtol' and 'atol'"):
        lamina.testing.assert_close(lm.ones(1), lm.ones(1), rtol=0.1)


def test_make_tensor_keeps_to_its_range_and_dtype():
    t = lamina.testing.make_tensor(50, 4, dtype=lm.int64, low=-2, high=3)
    assert t.dtype == lm.int64 and t.min().item() >= -2 and t.max().item() < 3
    f = lamina.testing.make_tensor((20,), dtype=lm.float64, exclude_zero=True)
    assert f.dtype == lm.float64 and (f.abs() < 9).all().item() and (f != 0).all().item()


def test_fork_rng_leaves_the_generator_as_it_was():
    lm.manual_seed(3)
    with lm.random.fork_rng():
        inside = lm.rand(4).tolist()
    assert lm.rand(4).tolist() == inside
