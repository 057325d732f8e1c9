"""SGD's momentum step through the axpby of the OpenBLAS NumPy bundles
(lamina/fused/numpy_blas.py), taken where MKL does not run the products and numba is not
loaded (an MLP's step on an AMD CPU): the update against float64, what it declines, and
PyTorch's float32 trajectory."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.optim as optim
from lamina import fused, parallel
from lamina.fused import mkl_blas, numpy_blas

pytestmark = pytest.mark.skipif(not numpy_blas.available(),
                                reason="NumPy's BLAS is not a bundled ILP64 OpenBLAS")

RNG = np.random.default_rng(0)
SHAPES = [(900, 700), (700,), (10, 700), (3,)]
CONFIGS = [dict(lr=0.05, momentum=0.9),
           dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-2),
           dict(lr=0.05, momentum=0.5, weight_decay=1e-3, maximize=True)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axpby_is_the_update_to_rounding(dtype):
    n = 300_007
    x, y0 = (RNG.standard_normal(n).astype(dtype) for _ in range(2))
    y = y0.copy()
    assert numpy_blas.axpby(0.7, x, -0.9, y) is True
    want = 0.7 * x.astype(np.float64) - 0.9 * y0.astype(np.float64)
    scale = 0.7 * np.abs(x.astype(np.float64)) + 0.9 * np.abs(y0.astype(np.float64))
    np.testing.assert_array_less(np.abs(y - want), 2 * np.finfo(dtype).eps * scale + 1e-30)


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


def _lamina(kw, grads):
    rng = np.random.default_rng(1)
    params = [lm.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
              for s in SHAPES]
    opt = optim.SGD(params, **kw)
    for step in grads:
        for p, g in zip(params, step):
            p.grad = g.copy()
        opt.step()
    return [p.array for p in params], opt


def _grads(steps):
    rng = np.random.default_rng(0)
    return [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]


@pytest.mark.torch
@pytest.mark.parametrize("kw", CONFIGS)
def test_momentum_through_openblas_follows_pytorch_in_float32(blas_calls, kw):
    torch = pytest.importorskip("torch")
    grads = _grads(20)
    ours, opt = _lamina(kw, grads)
    per_step = 3 if kw.get("weight_decay") else 2
    assert len(blas_calls) == per_step * 19 * len(SHAPES)  # every step after the first
    rng = np.random.default_rng(1)
    theirs = [torch.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
              for s in SHAPES]
    topt = torch.optim.SGD(theirs, **kw)
    for step in grads:
        for p, g in zip(theirs, step):
            p.grad = torch.tensor(g)
        topt.step()
    for a, b, p in zip(ours, theirs, opt.param_groups[0]["params"]):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(opt.state[p]["momentum_buffer"],
                                   topt.state[b]["momentum_buffer"].numpy(),
                                   rtol=2e-5, atol=2e-6)


def test_nesterov_plain_sgd_and_numba_keep_numpys_passes(blas_calls, monkeypatch):
    _lamina(dict(lr=0.05, momentum=0.9, nesterov=True), _grads(3))
    _lamina(dict(lr=0.05), _grads(3))
    assert blas_calls == []
    monkeypatch.setattr(fused, "loaded", lambda: object())  # numba loaded: its kernel or
    monkeypatch.setattr(optim.sgd, "COMPILED_FROM", 10**9)  # NumPy's passes, not BLAS's
    _lamina(CONFIGS[0], _grads(3))
    assert blas_calls == []


def test_the_path_chosen_at_the_first_step_is_kept(blas_calls, monkeypatch):
    """numba loaded later (by a larger validation batch's op) does not switch the steps
    to NumPy's bits: a run resumed in a fresh process would not switch where this did."""
    rng = np.random.default_rng(2)
    p = lm.tensor(rng.standard_normal((300, 400)).astype(np.float32), requires_grad=True)
    opt = optim.SGD([p], lr=0.05, momentum=0.9)
    for step in range(4):
        if step == 2:
            monkeypatch.setattr(fused, "loaded", lambda: object())
        before = len(blas_calls)
        p.grad = lm.tensor(rng.standard_normal(p.shape).astype(np.float32))
        opt.step()
        assert len(blas_calls) == before + (0 if step == 0 else 2)
