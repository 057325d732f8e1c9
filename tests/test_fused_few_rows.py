"""lamina.fused.row_product (few_rows.py): products on a few rows shared over numba's
threads. Where it runs, that it gives float64's product, and that a linear layer on a
few rows, eager, planned and in training, gives what PyTorch gives."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

import lamina as lm
import lamina.fused as fused
from lamina import thread_pools
from lamina.fused import few_rows

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")


@pytest.fixture
def two_threads(monkeypatch, rng):
    """Two threads and quiet pools (what lamina.runtime.tune_process sets): the product's
    condition. Skips where numba's pool is not OpenMP."""
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", thread_pools.BLAS_THREAD_TIMEOUT)
    monkeypatch.setenv("GOMP_SPINCOUNT", thread_pools.OMP_SPIN)
    before = lm.get_num_threads()
    lm.set_num_threads(2)
    W = rng.standard_normal((512, 512)).astype(np.float32)
    fused.row_product(np.ones((1, 512), np.float32), W)  # starts numba's pool
    if fused.threaded_parts() != 2:
        lm.set_num_threads(before)
        pytest.skip("numba's thread pool is not OpenMP here")
    yield
    lm.set_num_threads(before)


@pytest.mark.parametrize("rows", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("n, k", [(1024, 784), (515, 257), (130, 1031)])
def test_row_product_is_the_product(two_threads, rng, rows, n, k):
    x = rng.standard_normal((rows, k)).astype(np.float32)
    W = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    want = x.astype(np.float64) @ W.T.astype(np.float64)
    tol = dict(rtol=1e-5, atol=1e-5 * np.sqrt(k))
    got = fused.row_product(x, W)
    assert got is not None and got.shape == (rows, n) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, **tol)
    out = np.full((rows, n), np.nan, np.float32)
    assert fused.row_product(x, W, b, out) is out
    np.testing.assert_allclose(out, want + b, **tol)


def test_row_product_carries_nan_and_infinity_as_blas_does(two_threads, rng):
    x = rng.standard_normal((3, 512)).astype(np.float32)
    W = rng.standard_normal((520, 512)).astype(np.float32)
    x[0, 7], x[1, 100], W[5, 3] = np.nan, np.inf, -np.inf
    want = x.astype(np.float64) @ W.T.astype(np.float64)
    got = fused.row_product(x, W)
    assert got is not None
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-3)


def test_row_product_declines_what_blas_runs_better(two_threads, rng):
    x = rng.standard_normal((1, 512)).astype(np.float32)
    W = rng.standard_normal((512, 512)).astype(np.float32)
    assert fused.row_product(x, W) is not None
    many = np.repeat(x, few_rows.ROWS + 1, axis=0)
    assert fused.row_product(many, W) is None  # BLAS's blocking wins from here
    assert fused.row_product(x.astype(np.float64), W.astype(np.float64)) is None
    assert fused.row_product(x, np.asfortranarray(W)) is None  # W's rows not contiguous
    assert fused.row_product(x[:, :64], W[:64, :64].copy()) is None  # too small a W
    assert fused.row_product(x, W, out=np.empty((1, 512), np.float32)[:, ::-1]) is None
    lm.set_num_threads(1)  # one thread: BLAS's kernels
    assert fused.row_product(x, W) is None


def test_row_product_declines_where_openmp_sleeps_between_ops(two_threads, monkeypatch, rng):
    x = rng.standard_normal((1, 512)).astype(np.float32)
    W = rng.standard_normal((512, 512)).astype(np.float32)
    assert fused.row_product(x, W) is not None
    # beside OpenBLAS (lamina.runtime.omp_spin): each product would wait for a wake-up
    monkeypatch.setenv("GOMP_SPINCOUNT", thread_pools.OMP_SPIN_BESIDE_OPENBLAS)
    assert fused.row_product(x, W) is None


@pytest.mark.parametrize("rows", [1, 4])
def test_linear_on_few_rows_matches_pytorch(two_threads, rng, rows):
    layer, ref = lm.nn.Linear(784, 1024), torch.nn.Linear(784, 1024)
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(layer.weight.detach().numpy()))
        ref.bias.copy_(torch.from_numpy(layer.bias.detach().numpy()))
    a = rng.standard_normal((rows, 784)).astype(np.float32)
    want = ref(torch.from_numpy(a))
    tol = dict(rtol=1e-5, atol=1e-5)
    layer.eval()
    with lm.no_grad():
        np.testing.assert_allclose(layer(lm.tensor(a)).numpy(), want.detach().numpy(), **tol)
    plan = lm.plan.compile(layer, example_batch=(lm.tensor(a),))
    np.testing.assert_allclose(plan(lm.tensor(a)).numpy(), want.detach().numpy(), **tol)
    x = lm.tensor(a, requires_grad=True)
    tx = torch.from_numpy(a).requires_grad_()
    (layer(x) ** 2).sum().backward()
    (ref(tx) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(layer.weight.grad.numpy(), ref.weight.grad.numpy(),
                               rtol=1e-4, atol=1e-4)
