"""SGD's momentum step through MKL's axpby (lamina/optim/sgd.py), taken where MKL runs the
products and numba is not loaded (an MLP's step): PyTorch's float32 trajectory, and one
thread's bits when it runs in pieces over threads."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.optim as optim
from lamina import fused, parallel
from lamina.fused import mkl_blas

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.torch,
              pytest.mark.skipif(mkl_blas.backend() != "mkl",
                                 reason="MKL is not installed or the CPU is not Intel's")]

SHAPES = [(900, 700), (700,), (10, 700), (3,)]  # the first is cut in two (pieces.MIN_PIECE)
CONFIGS = [dict(lr=0.05, momentum=0.9),
           dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-2),
           dict(lr=0.05, momentum=0.5, weight_decay=1e-3, maximize=True)]


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


def _grads(steps):
    rng = np.random.default_rng(0)
    return [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]


def _lamina(kw, grads, threads):
    lm.set_num_threads(threads)
    rng = np.random.default_rng(1)
    params = [lm.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
              for s in SHAPES]
    opt = optim.SGD(params, **kw)
    for step in grads:
        for p, g in zip(params, step):
            p.grad = g.copy()
        opt.step()
    return [p.array for p in params], opt


@pytest.mark.parametrize("kw", CONFIGS)
def test_momentum_through_mkl_follows_pytorch_in_float32(blas_calls, kw):
    grads = _grads(20)
    ours, opt = _lamina(kw, grads, 1)
    assert len(blas_calls) >= 2 * 19 * len(SHAPES)  # every step after the first
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


def test_pieces_over_threads_give_one_threads_bits(blas_calls):
    grads = _grads(4)
    want, _ = _lamina(CONFIGS[1], grads, 1)
    whole = list(blas_calls)
    got, _ = _lamina(CONFIGS[1], grads, 2)
    assert max(blas_calls[len(whole):]) < max(whole)  # the large ones ran in pieces
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)


def test_nesterov_and_numba_keep_numpys_passes(blas_calls, monkeypatch):
    _lamina(dict(lr=0.05, momentum=0.9, nesterov=True), _grads(3), 1)
    assert blas_calls == []
    monkeypatch.setattr(fused, "loaded", lambda: object())  # numba loaded: its kernel or
    monkeypatch.setattr(optim.sgd, "COMPILED_FROM", 10**9)  # NumPy's passes, never MKL's
    _lamina(CONFIGS[0], _grads(3), 1)
    assert blas_calls == []


def test_the_path_chosen_at_the_first_momentum_step_is_kept(blas_calls, monkeypatch):
    """numba loaded later (by a larger validation batch's op) does not switch the steps
    to NumPy's bits: a run resumed in a fresh process would not switch where this did."""
    rng = np.random.default_rng(2)
    p = lm.tensor(rng.standard_normal((300, 400)).astype(np.float32), requires_grad=True)
    opt = optim.SGD([p], lr=0.05, momentum=0.9)
    for step in range(4):
        if step == 2:
            monkeypatch.setattr(fused, "loaded", lambda: object())
        before = len(blas_calls)
        p.grad = rng.standard_normal(p.shape).astype(np.float32)
        opt.step()
        assert len(blas_calls) > before or step == 0  # the first step makes the buffer
