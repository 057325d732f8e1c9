"""SGD's momentum step on a BLAS (MKL's, or the OpenBLAS NumPy bundles) against PyTorch:
the parameters, gradients, runs and comparison that tests/optim/test_sgd_mkl.py and
test_sgd_openblas.py share, and the axpby check they share with tests/test_mkl_blas.py."""

from __future__ import annotations

import numpy as np

import lamina as lm
import lamina.optim as optim

SHAPES = [(900, 700), (700,), (10, 700), (3,)]  # the first is cut in two (pieces.MIN_PIECE)
CONFIGS = [dict(lr=0.05, momentum=0.9),
           dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-2),
           dict(lr=0.05, momentum=0.5, weight_decay=1e-3, maximize=True)]


def assert_axpby_is_the_update(axpby, dtype, n=300_007):
    """axpby(0.7, x, -0.9, y) on random x and y of n elements is y = 0.7 x - 0.9 y to
    rounding, against float64; returns (x, y before, y after)."""
    rng = np.random.default_rng(0)
    x, y0 = (rng.standard_normal(n).astype(dtype) for _ in range(2))
    y = y0.copy()
    assert axpby(0.7, x, -0.9, y) is True
    want = 0.7 * x.astype(np.float64) - 0.9 * y0.astype(np.float64)
    scale = 0.7 * np.abs(x.astype(np.float64)) + 0.9 * np.abs(y0.astype(np.float64))
    np.testing.assert_array_less(np.abs(y - want), 2 * np.finfo(dtype).eps * scale + 1e-30)
    return x, y0, y


def grads(steps):
    """Each step's gradient of every parameter."""
    rng = np.random.default_rng(0)
    return [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(steps)]


def run_sgd(kw, steps, threads=None):
    """(the parameters' arrays, the optimizer) after lamina's SGD(**kw) took `steps`."""
    if threads is not None:
        lm.set_num_threads(threads)
    rng = np.random.default_rng(1)
    params = [lm.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
              for s in SHAPES]
    opt = optim.SGD(params, **kw)
    for step in steps:
        for p, g in zip(params, step):
            p.grad = g.copy()
        opt.step()
    return [p.array for p in params], opt


def assert_follows_pytorch(torch, kw, steps, ours, opt):
    """PyTorch's SGD(**kw) from the same start over the same gradients: the parameters
    and momentum buffers agree with lamina's in float32."""
    rng = np.random.default_rng(1)
    theirs = [torch.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
              for s in SHAPES]
    topt = torch.optim.SGD(theirs, **kw)
    for step in steps:
        for p, g in zip(theirs, step):
            p.grad = torch.tensor(g)
        topt.step()
    for a, b, p in zip(ours, theirs, opt.param_groups[0]["params"]):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(opt.state[p]["momentum_buffer"],
                                   topt.state[b]["momentum_buffer"].numpy(),
                                   rtol=2e-5, atol=2e-6)


def assert_numba_keeps_numpys_passes(calls, monkeypatch):
    """With numba loaded, SGD takes numba's kernel or NumPy's passes, never the BLAS."""
    from lamina import fused

    monkeypatch.setattr(fused, "loaded", lambda: object())
    monkeypatch.setattr(optim.sgd, "COMPILED_FROM", 10**9)  # NumPy's passes
    run_sgd(CONFIGS[0], grads(3))
    assert calls == []


def assert_the_first_steps_path_is_kept(calls, monkeypatch):
    """numba loaded later (by a larger validation batch's op) does not switch the steps
    to NumPy's bits: a run resumed in a fresh process would not switch where this did.
    `calls`: the BLAS calls so far; every step makes some, the first too (its momentum
    buffer starts at zeros and takes the whole gradient)."""
    from lamina import fused

    rng = np.random.default_rng(2)
    p = lm.tensor(rng.standard_normal((300, 400)).astype(np.float32), requires_grad=True)
    opt = optim.SGD([p], lr=0.05, momentum=0.9)
    for step in range(4):
        if step == 2:
            monkeypatch.setattr(fused, "loaded", lambda: object())
        before = len(calls)
        p.grad = lm.tensor(rng.standard_normal(p.shape).astype(np.float32))
        opt.step()
        assert len(calls) > before
