"""A plan's fused convolution + max pooling (ConvMaxPool): its gradients against central
differences, its numbers against the two eager ops, and when a plan uses it."""

from __future__ import annotations

import numpy as np
import pytest
from plan_cases import assert_plan_tracks_eager, close, eager_and_planned

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
from lamina.functions import winograd
from lamina.functions.conv import Conv
from lamina.functions.pooling import MaxPool
from lamina.plan import compile
from lamina.plan.kernels import ConvMaxPool
from lamina.plan.kernels.conv import ConvKernel

# (nd, in channels, out channels, groups, kernel, stride, padding, dilation, window, size):
# windows that leave a last row or column uncovered, strides, padding, dilation, groups,
# a 1x1 kernel, and windows of 1, 3 and 2x3.
GEOMETRIES = [
    (2, 1, 4, 1, 3, 1, 0, 1, 2, (9, 8)),
    (2, 2, 4, 2, 3, 1, 1, 1, 2, (7, 7)),
    (2, 3, 2, 1, (2, 3), 2, (1, 0), 1, (2, 1), (10, 9)),
    (2, 1, 3, 1, 3, 1, 2, 2, 3, (8, 8)),
    (2, 6, 4, 2, 1, 1, 0, 1, (2, 3), (6, 7)),
    (2, 8, 4, 1, 3, 2, 1, 1, 1, (7, 7)),
    (1, 1, 4, 1, 5, 1, 2, 1, 2, (11,)),
    (1, 2, 3, 1, 3, 2, 0, 2, 3, (23,)),
]
IDS = [f"{g[0]}d-c{g[1]}-g{g[3]}-k{g[4]}-s{g[5]}-p{g[6]}-d{g[7]}-w{g[8]}" for g in GEOMETRIES]


def _ops(nd, c, o, groups, k, s, p, d, window):
    return Conv(nd, s, p, d, groups), MaxPool(nd, window, None, 0)


def _arrays(nd, c, o, groups, k, size, dtype, rng, ties=False):
    kernel = (k,) * nd if isinstance(k, int) else k
    x = rng.standard_normal((3, c, *size))
    if ties:  # zeros: windows whose maximum repeats exactly (the bias), in any GEMM order
        x[:, :, : size[0] // 2] = 0
        x[1] = 0
    w = rng.standard_normal((o, c // groups, *kernel))
    b = rng.standard_normal(o)
    return [a.astype(dtype) for a in (x, w, b)]


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=IDS)
def test_gradients_match_central_differences(geometry) -> None:
    nd, c, o, groups, k, s, p, d, window, size = geometry
    conv, pool = _ops(nd, c, o, groups, k, s, p, d, window)
    arrays = _arrays(nd, c, o, groups, k, size, np.float64, np.random.default_rng(0))
    for bias in (True, False):
        inputs = arrays if bias else arrays[:2]
        assert lm.gradcheck(lambda *t: ConvMaxPool(conv, pool).apply(*t), inputs)


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=IDS)
def test_equals_the_eager_ops(geometry) -> None:
    """The same GEMM dot products (OpenBLAS may round one column of another block
    differently), the bias before the maximum, the first maximum on ties: the output and
    every gradient equal the eager convolution and pooling's to float32 rounding. A tie
    routed to another element would differ by a whole gradient."""
    nd, c, o, groups, k, s, p, d, window, size = geometry
    for ties in (False, True):
        x, w, b = (lm.tensor(a, requires_grad=True) for a in _arrays(
            nd, c, o, groups, k, size, np.float32, np.random.default_rng(1), ties))
        conv, pool = _ops(nd, c, o, groups, k, s, p, d, window)
        results = []
        for fused in (True, False):
            for t in (x, w, b):
                t.grad = None
            y = (ConvMaxPool(conv, pool).apply(x, w, b) if fused
                 else pool.apply(Conv(nd, s, p, d, groups).apply(x, w, b)))
            gy = np.random.default_rng(2).standard_normal(y.shape).astype(np.float32)
            (y * lm.tensor(gy)).sum().backward()
            results.append([y.array, x.grad, w.grad, b.grad])
        for got, want in zip(*results):
            close(got, want, 1e-6)


def _cnn(channels=1, pool=None):
    return nn.Sequential(nn.Conv2d(channels, 4, 3), nn.ReLU(), pool or nn.MaxPool2d(2),
                         nn.Conv2d(4, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(24, 3))


def _batch(channels=1):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, channels, 10, 10)).astype(np.float32)
    x[:, :, :4] = 0  # zero rows: tied windows
    return lm.tensor(x), lm.tensor(np.array([0, 1, 2, 0, 1]))


def test_a_plan_fuses_a_convolution_with_few_channels_into_its_pooling() -> None:
    lm.manual_seed(0)
    model, (x, y) = _cnn(), _batch()
    plan = compile(model, F.cross_entropy, (x, y))
    text = plan.describe()
    assert "MaxPool(Conv#0(x)) -> ConvMaxPool(x)" in text
    forward = [n.name for n in plan.last.forward]
    # the second convolution has 4 channels: apart, it keeps its faster flat im2col
    assert forward[:4] == ["ConvMaxPool", "ReLU", "Conv", "MaxPool"]
    assert_plan_tracks_eager(model, plan, x, y)  # tied windows included


def test_traced_ops_that_no_longer_run_free_what_the_trace_left_in_them() -> None:
    """The fused convolution and pooling, and every op lowered to a kernel, ran eagerly in
    the trace and kept a window matrix, indices, masks: released once the program is built."""
    lm.manual_seed(0)
    model, (x, y) = _cnn(), _batch()
    program = compile(model, F.cross_entropy, (x, y)).last
    running = {id(n.fn) for n in program.forward}
    replaced = [n.fn for n in program.trace.nodes if id(n.fn) not in running]
    assert {"Conv", "MaxPool", "ReLU", "Linear"} <= {fn.name for fn in replaced}
    assert all(fn.released and fn.saved_tensors == () for fn in replaced)


def test_fused_inference_plan_keeps_nothing_for_backward() -> None:
    lm.manual_seed(0)
    model, (x, _) = _cnn(), _batch()
    plan = compile(model.eval(), None, (x,))
    close(plan(x).array, model(x).array, 1e-6)
    fused = plan.last.forward[0].fn
    assert isinstance(fused, ConvMaxPool)
    assert not hasattr(fused, "idx") and fused.saved_tensors == ()


@pytest.mark.parametrize("pool", [nn.MaxPool2d(2, stride=1), nn.MaxPool2d(2, padding=1),
                                  nn.AvgPool2d(2)], ids=["overlapping", "padded", "average"])
def test_pooling_that_does_not_tile_is_not_fused(pool) -> None:
    model = nn.Sequential(nn.Conv2d(1, 4, 3), pool, nn.Flatten())
    x = _batch()[0]
    plan = compile(model, lambda out, _: out.sum(), (x, x))
    assert "ConvMaxPool" not in plan.describe()


def test_a_convolution_read_by_another_op_is_not_fused() -> None:
    class Both(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)

        def forward(self, x):
            h = self.conv(x)
            return F.max_pool2d(h, 2).sum() + h.sum()

    model, x = Both(), _batch()[0]
    plan = compile(model, lambda out, _: out, (x, x))
    assert "ConvMaxPool" not in plan.describe()
    planned, eager = eager_and_planned(model, lambda out, _: out, x, x, step=plan)
    for name, g in eager[1].items():
        np.testing.assert_allclose(planned[1][name], g, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("variant", [*ConvKernel.lower(Conv(2, 1, 0, 1, 1)).variants,
                                     "winograd"])
def test_a_cropped_convolution_is_the_top_left_of_the_whole(variant, monkeypatch) -> None:
    """ConvKernel.crop computes output rows and columns [0, crop) only: the whole convolution's
    output sliced, and the gradients of the whole one with zeros beyond the crop. The
    "winograd" case runs Winograd's product in float32, its tiles over the crop."""
    rng = np.random.default_rng(5)
    dtype, tol = (np.float32, 1e-5) if variant == "winograd" else (np.float64, 1e-12)
    if variant == "winograd":
        monkeypatch.setattr(winograd, "MIN_CHANNELS", 1)
        monkeypatch.setattr(winograd, "MIN_TILE_CHANNELS", 1)
    x = rng.standard_normal((2, 5, 9, 8)).astype(dtype)
    w, b = rng.standard_normal((3, 5, 3, 3)).astype(dtype), rng.standard_normal(3).astype(dtype)
    gy = rng.standard_normal((2, 3, 6, 5)).astype(dtype)
    results = []
    for crop in (None, (6, 5)):
        conv = ConvKernel.lower(Conv(2, 1, 1, 1, 1))
        conv.variant, conv.crop = ("" if variant == "winograd" else variant), crop
        conv.needs_input_grad = (True, True, True)
        y = conv.forward(x, w, b)
        assert conv.winograd == (variant == "winograd")
        whole = np.zeros(y.shape, dtype)
        whole[:, :, :6, :5] = gy
        results.append((y[:, :, :6, :5], *conv.backward(gy if crop else whole)))
    assert results[1][0].shape == (2, 3, 6, 5)
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _cropped_cnn(nd):
    conv, pool = (nn.Conv1d, nn.MaxPool1d) if nd == 1 else (nn.Conv2d, nn.MaxPool2d)
    return nn.Sequential(conv(4, 6, 3), nn.ReLU(), pool(2), nn.Flatten(),
                         nn.Linear(6 * 4 ** nd, 3))


@pytest.mark.parametrize("nd", [1, 2])
@pytest.mark.parametrize("tune", [False, True])
def test_a_plan_computes_only_the_convolution_outputs_pooling_reads(nd, tune) -> None:
    lm.manual_seed(0)
    model = _cropped_cnn(nd)
    rng = np.random.default_rng(6)
    x = lm.tensor(rng.standard_normal((5, 4, *(11,) * nd)).astype(np.float32))
    y = lm.tensor(np.array([0, 1, 2, 0, 1]))
    plan = compile(model, F.cross_entropy, (x, y), tune=tune)
    size = "8x8 of its 9x9" if nd == 2 else "1x8 of its 1x9"
    assert f"Conv#0 computes {size} outputs" in plan.describe()
    assert plan.last.forward[0].fn.crop is not None
    assert_plan_tracks_eager(model, plan, x, y)


def test_a_convolution_pooled_with_padding_is_not_cropped() -> None:
    model = nn.Sequential(nn.Conv2d(4, 6, 3), nn.MaxPool2d(2, padding=1), nn.Flatten())
    x = lm.tensor(np.random.default_rng(7).standard_normal((2, 4, 11, 11)).astype(np.float32))
    plan = compile(model, lambda out, _: out.sum(), (x, x))
    assert "computes" not in plan.describe()
