"""ConvMaxPool's direct kernels (lamina/fused/numba_conv_pool.py), for a first layer's few
input channels: the output and the weight's and bias's gradients against the eager
convolution and pooling in float64, ties and NaN chosen as eager (PyTorch's) pooling
chooses, and a plan that uses them tracking the eager step."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from plan_cases import close

import lamina as lm
import lamina.nn as nn
from lamina.functions.conv import Conv
from lamina.functions.pooling import MaxPool
from lamina.plan import compile
from lamina.plan.kernels import ConvMaxPool, conv_pool

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")

# (in channels, out channels, kernel, padding, dilation, window, size)
GEOMETRIES = [
    (1, 32, 3, 0, 1, 2, (28, 28)),
    (3, 8, 3, 2, 1, 2, (17, 16)),
    (2, 5, 3, 1, 2, 3, (15, 15)),
    (1, 4, (2, 3), (1, 0), 1, (2, 1), (10, 9)),
]
IDS = [f"c{g[0]}-o{g[1]}-k{g[2]}-p{g[3]}-d{g[4]}-w{g[5]}" for g in GEOMETRIES]


@pytest.fixture
def direct_runs(monkeypatch):
    """The calls of the direct path, recorded."""
    ran = []
    for name in ("direct_forward", "direct_backward"):
        inner = getattr(conv_pool, name)
        monkeypatch.setattr(conv_pool, name, lambda *a, inner=inner, name=name:
                            ran.append(name) or inner(*a))
    lm.fused.set_backend("numba")
    yield ran
    lm.fused.set_backend(None)


def _arrays(c, o, k, size, rng, special=None):
    kernel = (k, k) if isinstance(k, int) else k
    x = rng.standard_normal((8, c, *size)).astype(np.float32)
    if special == "ties":  # zeros: windows whose maximum repeats exactly (the bias)
        x[:, :, : size[0] // 2] = 0
        x[1] = 0
    elif special == "nan":
        x[2, 0, 3, 4] = x[5, -1, 6, 2] = np.nan
    w = rng.standard_normal((o, c, *kernel)).astype(np.float32)
    return x, w, rng.standard_normal(o).astype(np.float32)


@pytest.mark.parametrize("special", [None, "ties", "nan"])
@pytest.mark.parametrize("geometry", GEOMETRIES, ids=IDS)
def test_direct_kernels_give_the_eager_ops(direct_runs, geometry, special):
    c, o, k, p, d, window, size = geometry
    x, w, b = _arrays(c, o, k, size, np.random.default_rng(0), special)
    pad, dil = (p, p) if isinstance(p, int) else p, (d, d)
    conv, pool = Conv(2, 1, pad, dil, 1), MaxPool(2, window, None, 0)
    results = []
    for dtype, direct in ((np.float32, True), (np.float64, False)):
        wt, bt = (lm.tensor(a.astype(dtype), requires_grad=True) for a in (w, b))
        xt = lm.tensor(x.astype(dtype))  # a first layer's input: no gradient
        y = (ConvMaxPool(conv, pool).apply(xt, wt, bt) if direct
             else MaxPool(2, window, None, 0).apply(Conv(2, 1, pad, dil, 1).apply(xt, wt, bt)))
        gy = np.random.default_rng(1).standard_normal(y.shape).astype(dtype)
        (y * lm.tensor(gy)).sum().backward()
        results.append([y.detach().numpy(), wt.grad.numpy(), bt.grad.numpy()])
    assert direct_runs == ["direct_forward", "direct_backward"]
    if special == "nan":  # which weight gradients a NaN reaches through products by zero
        del results[0][1], results[1][1]  # is each path's own, as in PyTorch's kernels
    for got, want in zip(*results):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        close(np.nan_to_num(got), np.nan_to_num(want), 1e-5)


def test_an_input_gradient_or_a_small_batch_takes_the_im2col_path(direct_runs):
    x, w, b = _arrays(1, 4, 3, (9, 8), np.random.default_rng(0))
    conv, pool = Conv(2, 1, 0, 1, 1), MaxPool(2, 2, None, 0)
    xt, wt = lm.tensor(x, requires_grad=True), lm.tensor(w, requires_grad=True)
    ConvMaxPool(conv, pool).apply(xt, wt).sum().backward()
    assert direct_runs == ["direct_forward"]  # the input's gradient: ConvMaxPool's own
    ConvMaxPool(conv, pool).apply(lm.tensor(x[:2]), wt)
    assert direct_runs == ["direct_forward"]  # two images: im2col's


def test_a_plan_with_a_first_conv_and_pooling_tracks_the_eager_step(direct_runs):
    lm.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 13 * 13, 10))
    rng = np.random.default_rng(0)
    x = lm.tensor(rng.standard_normal((16, 1, 28, 28)).astype(np.float32))
    y = lm.tensor(rng.integers(0, 10, 16))
    loss_fn = lm.nn.functional.cross_entropy
    eager = loss_fn(model(x), y)
    eager.backward()
    want = [eager.item(), *(p.grad.numpy().copy() for p in model.parameters())]
    model.zero_grad()
    plan = compile(model, loss_fn, (x, y))
    direct_runs.clear()
    loss = plan(x, y)
    assert "direct_forward" in direct_runs and "direct_backward" in direct_runs
    close(float(loss), want[0], 1e-5)
    for p, g in zip(model.parameters(), want[1:]):
        close(p.grad.numpy(), g, 1e-4)
