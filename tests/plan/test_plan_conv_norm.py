"""An inference plan's convolution + eval-mode batch norm (+ ReLU) as one kernel
(ConvBatchNorm, plan.rewrite.fold_batch_norm): the eager numbers bit for bit, the running
statistics read at every run, and where it must not fold."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from plan_cases import assert_plan_tracks_eager

import lamina as lm
import lamina.functions as F
import lamina.fused as fused
import lamina.nn as nn
from lamina.plan import compile


def _net(bias: bool = False, affine: bool = True, relu: bool = True):
    """Two convolutions, each followed by a batch norm with running statistics far from
    their initial ones (and by a ReLU, the first one at least)."""
    lm.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=bias), nn.BatchNorm2d(8, affine=affine),
                          nn.ReLU(), nn.Conv2d(8, 4, 3, stride=2, bias=bias),
                          nn.BatchNorm2d(4, affine=affine), *([nn.ReLU()] if relu else []))
    rng = np.random.default_rng(1)
    with lm.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                c = m.num_features
                m.running_mean.copy_(lm.tensor(rng.standard_normal(c).astype(np.float32)))
                m.running_var.copy_(lm.tensor(rng.uniform(0.2, 3, c).astype(np.float32)))
                if affine:
                    m.weight.copy_(lm.tensor(rng.standard_normal(c).astype(np.float32)))
                    m.bias.copy_(lm.tensor(rng.standard_normal(c).astype(np.float32)))
    return model


def _x(n: int = 5):
    return lm.tensor(np.random.default_rng(2).standard_normal((n, 3, 9, 9)).astype(np.float32))


@pytest.mark.parametrize("n", [1, 5])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("relu", [True, False])
def test_an_inference_plan_folds_the_norm_and_relu_into_the_convolution(n, bias, affine,
                                                                          relu) -> None:
    model, x = _net(bias, affine, relu).eval(), _x(n)
    plan = compile(model, None, (x,))
    assert [s.name for s in plan.last.forward] == ["ConvBatchNorm", "ConvBatchNorm"]
    text = plan.describe()
    assert "ReLU(BatchNorm#1(Conv#0(x))) -> ConvBatchNorm(x)" in text
    assert ("ReLU(BatchNorm#4(Conv#3(x)))" in text) == relu
    with lm.no_grad():
        eager = model(x).array
    np.testing.assert_array_equal(plan(x).array, eager)  # the same arithmetic, in order


def test_the_plan_reads_the_running_statistics_at_every_run() -> None:
    model, x = _net().eval(), _x()
    plan = compile(model, None, (x,))
    with lm.no_grad():
        model[1].running_mean.add_(1.5)
        model[4].running_var.mul_(4.0)
        model[1].weight.mul_(-2.0)
        eager = model(x).array
    np.testing.assert_array_equal(plan(x).array, eager)


def test_batch_norm_in_training_mode_is_not_folded() -> None:
    model, x = _net(), _x()
    y = lm.tensor(np.arange(5) % 4)

    def loss(out, y):
        return F.cross_entropy(out.mean((2, 3)), y)

    plan = compile(model.train(), loss, (x, y))
    assert "ConvBatchNorm" not in plan.describe()


def test_a_frozen_norm_that_gradients_pass_through_is_not_folded() -> None:
    """Fine-tuning with the norms in eval mode: the gradients flow through them."""
    model, x = _net(relu=False).eval(), _x()
    head = nn.Sequential(model, nn.Flatten(), nn.Linear(64, 3))
    plan = compile(head, F.cross_entropy, (x, lm.tensor(np.arange(5) % 3)))
    assert "ConvBatchNorm" not in plan.describe()
    assert_plan_tracks_eager(head, plan, x, lm.tensor(np.arange(5) % 3))


def test_a_convolution_or_norm_read_by_another_op_keeps_it_apart() -> None:
    class Skip(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv, self.norm = nn.Conv2d(3, 3, 3, padding=1), nn.BatchNorm2d(3)
            self.conv2, self.norm2 = nn.Conv2d(3, 3, 3, padding=1), nn.BatchNorm2d(3)

        def forward(self, x):
            h = self.conv(x)
            y = self.norm(h) + h  # the convolution's output read twice: no fold
            z = self.norm2(self.conv2(y))
            return F.relu(z) + z  # the norm's read twice: folded without the ReLU

    lm.manual_seed(0)
    model, x = Skip().eval(), _x()
    plan = compile(model, None, (x,))
    assert [s.name for s in plan.last.forward].count("ConvBatchNorm") == 1
    assert "BatchNorm#4(Conv#3(x)) -> ConvBatchNorm(x)" in plan.describe()
    with lm.no_grad():
        np.testing.assert_array_equal(plan(x).array, model(x).array)


@pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                    reason="numba is not installed (pip install 'lamina[fast]')")
@pytest.mark.parametrize("n", [1, 5])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("relu", [True, False])
def test_numbas_one_pass_gives_numpys_numbers_bit_for_bit(monkeypatch, n, bias, affine,
                                                          relu) -> None:
    """Where numba is loaded, the bias, the norm and the ReLU are one kernel's pass
    (numba_channels.channel_affine): the numbers of NumPy's passes, NaN kept."""
    kernels = fused.compiled()  # loaded: the plan's kernel and eager's norm take it
    calls = []
    one_pass = kernels.channel_affine
    monkeypatch.setattr(kernels, "channel_affine", lambda *a: calls.append(1) or one_pass(*a))
    model, x = _net(bias, affine, relu).eval(), _x(n)
    x.array[0, 1, 2, 3] = np.nan
    plan = compile(model, None, (x,))
    calls.clear()
    got = plan(x).array
    assert len(calls) == 2
    with lm.no_grad():
        eager = model(x).array  # eager's norms: the kernel too
    assert len(calls) == 4
    fused.set_backend("numpy")
    try:
        with lm.no_grad():
            numpy_eager = model(x).array
    finally:
        fused.set_backend(None)
    assert len(calls) == 4 and np.isnan(numpy_eager).any()
    np.testing.assert_array_equal(got, numpy_eager)
    np.testing.assert_array_equal(eager, numpy_eager)
