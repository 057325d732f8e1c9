"""lamina.fused.shares: one op's kernel in shares on numba's OpenMP pool (numba_parts.py)
gives what its serial kernel gives over the whole array (the same bits for elementwise
kernels; to float32 rounding where a row's sums may vectorize in another order), runs
where the threaded kernels run, and falls back to lamina's pool or the caller elsewhere."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import lamina as lm
import lamina.fused as fused
from lamina import thread_pools
from lamina.fused import shares

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")


@pytest.fixture
def two_shares(monkeypatch):
    """Two threads and the pools quiet (what lamina.runtime.tune_process sets), each
    kernel of numba_parts that runs recorded; skips where numba's pool is not OpenMP."""
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", thread_pools.BLAS_THREAD_TIMEOUT)
    monkeypatch.setenv("GOMP_SPINCOUNT", thread_pools.OMP_SPIN)
    before = lm.get_num_threads()
    lm.set_num_threads(2)
    fused.set_backend("numba")
    module, parts = shares.split_kernels(1 << 20)
    if parts != 2:
        lm.set_num_threads(before)
        fused.set_backend(None)
        pytest.skip("numba's thread pool is not OpenMP here")
    ran: list[str] = []
    for name in dir(module):
        if name.endswith("_parts"):
            inner = getattr(module, name)
            monkeypatch.setattr(module, name, lambda parts, *a, inner=inner, name=name:
                                ran.append((name, parts)) or inner(parts, *a))
    yield ran
    lm.set_num_threads(before)
    fused.set_backend(None)


def _x(shape, seed=0, scale=3.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _close(got, want):
    """Equal to float32 rounding: a row's sums may run in another order in a share."""
    np.testing.assert_allclose(got, want, rtol=4e-6, atol=1e-6)


def test_gelu_in_shares_is_the_serial_kernels_bits(two_shares):
    kernels = fused.compiled()
    x, gy = _x(300_001), _x(300_001, 1)
    y, gx = fused.gelu(x), fused.gelu_grad(x, gy)
    y1, gx1 = np.empty_like(x), np.empty_like(x)
    kernels.gelu_values(x, y1)
    kernels.gelu_grad(x, gy, gx1)
    assert two_shares == [("gelu_values_parts", 2), ("gelu_grad_parts", 2)]
    np.testing.assert_array_equal(y, y1)
    np.testing.assert_array_equal(gx, gx1)


def test_relu_and_its_gradient_in_shares_match_numpy(two_shares):
    x0, gy = _x((64, 32, 13, 13)), _x((64, 32, 13, 13), 1)
    x = lm.tensor(x0, requires_grad=True)
    y = lm.relu(x)
    y.backward(lm.tensor(gy))
    assert [name for name, _ in two_shares] == ["relu_parts", "relu_backward_parts"]
    np.testing.assert_array_equal(y.detach().numpy(), np.maximum(x0, 0))
    np.testing.assert_array_equal(x.grad.numpy(), np.where(x0 > 0, gy, 0))


@pytest.mark.parametrize("rows", [1601, 4096])
def test_layer_norm_in_shares_is_the_serial_kernels(two_shares, rows):
    kernels = fused.compiled()
    x, gy = _x((rows, 128)), _x((rows, 128), 1)
    w, b = _x(128, 2, 1.0), _x(128, 3, 1.0)
    y, mean, invstd = fused.layer_norm(kernels, x, w, b, 1e-5)
    gx, gw, gb = fused.layer_norm_backward(kernels, gy, x, mean, invstd, w)
    assert [name for name, _ in two_shares] == ["layer_norm_parts",
                                                "layer_norm_backward_parts"]
    y1, mean1, inv1 = np.empty_like(x), np.empty(rows, np.float32), np.empty(rows, np.float32)
    kernels.layer_norm(x, w, b, 1e-5, y1, mean1, inv1)
    gx1, gw1, gb1 = np.empty_like(x), np.zeros(128), np.zeros(128)
    kernels.layer_norm_backward(gy, x, mean1, inv1, w, gx1, gw1, gb1)
    for got, want in ((y, y1), (mean, mean1), (invstd, inv1), (gx, gx1)):
        _close(got, want)
    # The sums of the shares, added in float64, then rounded once.
    np.testing.assert_allclose(gw, gw1.astype(np.float32), rtol=1e-6, atol=1e-4)
    np.testing.assert_allclose(gb, gb1.astype(np.float32), rtol=1e-6, atol=1e-4)


@pytest.mark.parametrize("causal, offset", [(False, 0), (True, 0), (True, 7)])
def test_softmax_and_log_softmax_in_shares_are_the_serial_kernels(two_shares, causal, offset):
    kernels = fused.compiled()
    x, gy = _x((64, 4, 50, 50)), _x((64, 4, 50, 50), 1)
    y = fused.softmax(kernels, x, 0.125, causal, offset)
    gx = fused.softmax_backward(kernels, y, gy, 0.125)
    rows = x.reshape(-1, 50)
    logp = fused.log_softmax(kernels, rows)
    assert [name for name, _ in two_shares] == [
        "softmax_rows_parts", "softmax_backward_parts", "log_softmax_rows_parts"]
    y1, gx1, logp1 = (np.empty_like(rows) for _ in range(3))
    kernels.softmax_rows(rows, y1, np.float32(0.125), 50 if causal else 0, 0, offset)
    kernels.softmax_backward(y1, gy.reshape(-1, 50), np.float32(0.125), gx1)
    kernels.log_softmax_rows(rows, logp1)
    _close(y.reshape(-1, 50), y1)
    _close(gx.reshape(-1, 50), gx1)
    _close(logp, logp1)


def test_batch_norm_in_shares_matches_the_serial_kernels(two_shares):
    kernels = fused.compiled()
    x3, gy = _x((64, 4096)), _x((64, 4096), 1)
    g, b = _x(64, 2, 1.0), _x(64, 3, 1.0)
    outs = [np.empty_like(x3), np.empty(64), np.empty(64), np.empty(64, np.float32)]
    fused.in_rows(kernels.batch_norm, x3, g, b, 1e-5, *outs)
    want = [np.empty_like(x3), np.empty(64), np.empty(64), np.empty(64, np.float32)]
    kernels.batch_norm(x3, g, b, 1e-5, *want)
    mean, invstd = outs[1].astype(np.float32), outs[3]
    grads = [np.empty_like(x3), np.empty(64), np.empty(64)]
    fused.in_rows(kernels.batch_norm_backward, gy, x3, mean, invstd, g, *grads)
    want_grads = [np.empty_like(x3), np.empty(64), np.empty(64)]
    kernels.batch_norm_backward(gy, x3, mean, invstd, g, *want_grads)
    assert [name for name, _ in two_shares] == ["batch_norm_parts", "batch_norm_backward_parts"]
    for got, expected in zip(outs + grads, want + want_grads):
        _close(got, expected)


def test_a_linear_layers_bias_is_added_in_shares(two_shares):
    x, W, b = _x((1600, 128)), _x((384, 128), 1), _x(384, 2)
    y = lm.nn.functional.linear(lm.tensor(x), lm.tensor(W), lm.tensor(b)).numpy()
    assert two_shares == [("add_row_parts", 2)]
    product = (lm.tensor(x) @ lm.tensor(W).T).numpy()  # the same GEMM, no bias
    np.testing.assert_array_equal(y, product + b)  # the same additions, in NumPy


@pytest.mark.parametrize("make,calls", [
    # Every step shares, the first too (its momentum buffer starts at zeros).
    (lambda p: lm.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=1e-3), ["sgd_parts"] * 3),
    (lambda p: lm.optim.AdamW([p], lr=1e-2, weight_decay=0.1), ["adam_parts"] * 3),
], ids=["sgd", "adamw"])
def test_an_optimizers_update_in_shares_is_the_one_thread_update(two_shares, make, calls):
    rng = np.random.default_rng(0)
    start = rng.standard_normal((1024, 384)).astype(np.float32)
    grads = [rng.standard_normal((1024, 384)).astype(np.float32) for _ in range(3)]
    results = []
    for threads in (2, 1):
        lm.set_num_threads(threads)
        p = lm.nn.Parameter(lm.tensor(start.copy()))
        opt = make(p)
        for g in grads:
            p.grad = lm.tensor(g)
            opt.step()
        results.append(p.detach().numpy())
    assert [name for name, _ in two_shares] == calls
    np.testing.assert_array_equal(results[0], results[1])  # each element's same bits
