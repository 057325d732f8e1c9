"""SGD's momentum step through MKL's axpby (lamina/optim/sgd.py), taken where MKL runs the
products and numba is not loaded (an MLP's step): PyTorch's float32 trajectory, and one
thread's bits on lamina's two threads, where each parameter's update runs whole."""

from __future__ import annotations

import numpy as np
import pytest
from sgd_cases import (
    CONFIGS,
    SHAPES,
    assert_follows_pytorch,
    assert_numba_keeps_numpys_passes,
    assert_the_first_steps_path_is_kept,
    grads,
    run_sgd,
)

from lamina import fused, parallel
from lamina.fused import mkl_blas

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.torch,
              pytest.mark.skipif(mkl_blas.backend() != "mkl",
                                 reason="MKL is not installed or the CPU is not Intel's")]

@pytest.fixture
def blas_calls(monkeypatch):
    """The calls SGD makes to MKL's axpby, in a process that has not loaded numba."""
    monkeypatch.setattr(fused, "loaded", lambda: None)
    calls = []
    real = mkl_blas.axpby
    monkeypatch.setattr(mkl_blas, "axpby", lambda *a: calls.append(a[1].size) or real(*a))
    before, parallel._threads = parallel._threads, None
    yield calls
    parallel._threads = before


@pytest.mark.parametrize("kw", CONFIGS)
def test_momentum_through_mkl_follows_pytorch_in_float32(blas_calls, kw):
    steps = grads(20)
    ours, opt = run_sgd(kw, steps, 1)
    assert len(blas_calls) >= 2 * 20 * len(SHAPES)  # every step, the first too
    assert_follows_pytorch(torch, kw, steps, ours, opt)


def test_two_threads_run_each_step_whole_with_one_threads_bits(blas_calls):
    steps = grads(4)
    want, _ = run_sgd(CONFIGS[1], steps, 1)
    whole = list(blas_calls)
    got, _ = run_sgd(CONFIGS[1], steps, 2)
    # Each parameter's update whole, on MKL's threads: lamina's pieces, each on one MKL
    # thread, only added their dispatch.
    assert blas_calls[len(whole):] == whole
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_nesterov_and_numba_keep_numpys_passes(blas_calls, monkeypatch):
    run_sgd(dict(lr=0.05, momentum=0.9, nesterov=True), grads(3), 1)
    assert blas_calls == []
    assert_numba_keeps_numpys_passes(blas_calls, monkeypatch)


def test_the_path_chosen_at_the_first_step_is_kept(blas_calls, monkeypatch):
    assert_the_first_steps_path_is_kept(blas_calls, monkeypatch)
