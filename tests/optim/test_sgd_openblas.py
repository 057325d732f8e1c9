"""SGD's momentum step through the axpby of the OpenBLAS NumPy bundles
(lamina/fused/numpy_blas.py), taken where MKL does not run the products and numba is not
loaded (an MLP's step on an AMD CPU): the update against float64, what it declines, and
PyTorch's float32 trajectory."""

from __future__ import annotations

import numpy as np
import pytest
from sgd_cases import (
    CONFIGS,
    SHAPES,
    assert_axpby_is_the_update,
    assert_follows_pytorch,
    assert_numba_keeps_numpys_passes,
    assert_the_first_steps_path_is_kept,
    grads,
    run_sgd,
)

from lamina import fused, parallel
from lamina.fused import mkl_blas, numpy_blas

pytestmark = pytest.mark.skipif(not numpy_blas.available(),
                                reason="NumPy's BLAS is not a bundled ILP64 OpenBLAS")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axpby_is_the_update_to_rounding(dtype):
    assert_axpby_is_the_update(numpy_blas.axpby, dtype)


def test_axpby_declines_what_it_does_not_take(monkeypatch):
    """Strided, mixed, read-only or a share of lamina's threads: it writes nothing."""
    x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    read_only = np.zeros(64, np.float32)
    read_only.flags.writeable = False
    for args in [(x[::2], y[::2]), (x, y.astype(np.float64)), (x, read_only),
                 (x.astype(np.float16), y.astype(np.float16)), (x, y[:32])]:
        before = args[1].copy()
        assert numpy_blas.axpby(2.0, args[0], 1.0, args[1]) is False
        np.testing.assert_array_equal(args[1], before)
    monkeypatch.setattr(parallel, "_threads", 2)  # the tasks of a split or of pieces
    assert parallel.run_all([lambda: numpy_blas.axpby(2.0, x, 1.0, y)] * 2) == [False] * 2
    assert not y.any()


@pytest.fixture
def blas_calls(monkeypatch):
    """The calls SGD makes to NumPy's OpenBLAS, in a process without numba or MKL."""
    monkeypatch.setattr(fused, "loaded", lambda: None)
    monkeypatch.setattr(mkl_blas, "ready", lambda: False)
    calls = []
    real = numpy_blas.axpby
    monkeypatch.setattr(numpy_blas, "axpby", lambda *a: calls.append(a[1].size) or real(*a))
    return calls


@pytest.mark.torch
@pytest.mark.parametrize("kw", CONFIGS)
def test_momentum_through_openblas_follows_pytorch_in_float32(blas_calls, kw):
    torch = pytest.importorskip("torch")
    steps = grads(20)
    ours, opt = run_sgd(kw, steps)
    per_step = 3 if kw.get("weight_decay") else 2
    assert len(blas_calls) == per_step * 20 * len(SHAPES)  # every step, the first too
    assert_follows_pytorch(torch, kw, steps, ours, opt)


def test_nesterov_plain_sgd_and_numba_keep_numpys_passes(blas_calls, monkeypatch):
    run_sgd(dict(lr=0.05, momentum=0.9, nesterov=True), grads(3))
    run_sgd(dict(lr=0.05), grads(3))
    assert blas_calls == []
    assert_numba_keeps_numpys_passes(blas_calls, monkeypatch)


def test_the_path_chosen_at_the_first_step_is_kept(blas_calls, monkeypatch):
    assert_the_first_steps_path_is_kept(blas_calls, monkeypatch)
