"""A linear layer's bias added by the op that alone reads its output (plan.rewrite_bias):
BiasGELU, BiasAdd and SplitHeads with a bias against the linear's bias and the op apart,
the eager step of an MLP block, a residual block and nanoGPT's attention, and where it
must not apply."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from plan_cases import (
    GPTAttention,
    assert_plan_tracks_eager,
    close,
    eager_and_planned,
    language_loss,
    language_model,
    token_batch,
)

import lamina as lm
import lamina.fused as fused
import lamina.nn as nn
import lamina.nn.functional as F
from lamina.functions.activation_gelu import GELU
from lamina.plan import compile
from lamina.plan.kernels.bias import BiasAdd, BiasGELU
from lamina.plan.kernels.heads import SplitHeads


@pytest.fixture(params=[pytest.param("numba", marks=pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="needs numba")), "numpy"])
def backend(request):
    """Each of lamina.fused's kernel sets in turn."""
    fused.set_backend(request.param)
    yield request.param
    fused.set_backend(None)


def _block(activation, bias=True, dtype=np.float32):
    lm.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32, bias=bias), activation, nn.Linear(32, 5))
    return model.to(lm.float64) if dtype == np.float64 else model


def _data(dtype=np.float32):
    rng = np.random.default_rng(3)
    return lm.tensor(rng.standard_normal((6, 8)).astype(dtype)), lm.tensor(rng.integers(0, 5, 6))


def test_bias_gelu_gives_gelu_of_the_sum_and_its_gradients_match_float64(backend):
    rng = np.random.default_rng(0)
    x, b, gy = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4, 32), (32,),
                                                                     (3, 4, 32)))
    op = BiasGELU()
    op.needs_input_grad = (True, True)
    gelu = GELU("none")
    gelu.needs_input_grad = (True,)
    np.testing.assert_array_equal(op.forward(x, b), gelu.forward(x + b))  # one kernel, one sum
    gx, gb = op.backward(gy)
    # float64 through the eager ops (the exact erf, checked against central differences
    # with the activations' tests)
    ts = [lm.tensor(a.astype(np.float64), requires_grad=True) for a in (x, b)]
    (F.gelu(ts[0] + ts[1]) * lm.tensor(gy.astype(np.float64))).sum().backward()
    np.testing.assert_allclose(gx, ts[0].grad.array, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gb, ts[1].grad.array, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bias_add_gives_the_residual_sum_bit_for_bit_and_its_gradients(dtype, backend):
    rng = np.random.default_rng(4)
    x, z, b = (rng.standard_normal(s).astype(dtype) for s in ((3, 5, 7), (3, 5, 7), (7,)))
    op = BiasAdd()
    op.needs_input_grad = (False, False, False)
    np.testing.assert_array_equal(op.forward(x, z, b), x + (z + b))
    ts = [lm.tensor(a.astype(np.float64), requires_grad=True) for a in (x, z, b)]
    assert lm.gradcheck(lambda *a: BiasAdd().apply(*a), ts)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_split_heads_with_a_bias_splits_the_sum_and_its_gradients_match_central_differences(
        dtype, backend):
    rng = np.random.default_rng(2)
    x, b = rng.standard_normal((2, 3, 3 * 8)).astype(dtype), rng.standard_normal(24).astype(dtype)
    parts = SplitHeads(3, 2).forward(x, b)
    views = [p.reshape(2, 3, 2, 4).transpose(0, 2, 1, 3) for p in np.split(x + b, 3, axis=-1)]
    for got, want in zip(parts, views):
        np.testing.assert_array_equal(got, want)
    ts = [lm.tensor(a.astype(np.float64), requires_grad=True) for a in (x, b)]
    assert lm.gradcheck(lambda a, c: SplitHeads(3, 2).apply(a, c)[:2], ts)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_plan_adds_the_bias_in_gelu_and_tracks_the_eager_step(threads):
    model, (x, y) = _block(nn.GELU()), _data()
    plan = compile(model, F.cross_entropy, (x, y), threads=threads)
    assert "GELU#1(Linear#0(x, W, b)) -> BiasGELU(Linear(x, W), b)" in plan.describe()
    program = plan.last if threads == 1 else plan.runner.programs[0]
    assert [n.name for n in program.forward][:2] == ["Linear", "BiasGELU"]
    assert_plan_tracks_eager(model, plan, x, y)


def test_a_plan_adds_attentions_projection_bias_in_the_heads_split():
    # fewer ids than the vocabulary's rows: the projection stays a linear of the lookup
    model, (x, y) = language_model(GPTAttention()), token_batch(2, 6)
    plan = compile(model, language_loss, (x, y))
    assert "SplitHeads(Linear(x, W), b)" in plan.describe()
    planned, eager = eager_and_planned(model, language_loss, x, y, step=plan)
    assert planned[0] == pytest.approx(eager[0], rel=1e-6)
    close(planned[1]["1.c_attn.bias"], eager[1]["1.c_attn.bias"])


class _Residual(nn.Module):
    """x + fc2(gelu(fc(norm(x)))): a transformer's MLP block."""

    def __init__(self):
        super().__init__()
        self.norm, self.fc, self.fc2 = nn.LayerNorm(8), nn.Linear(8, 32), nn.Linear(32, 8)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        return self.head(x + self.fc2(F.gelu(self.fc(self.norm(x)))))


@pytest.mark.parametrize("threads", [1, 2])
def test_a_plan_adds_the_bias_in_a_residual_sum_and_tracks_the_eager_step(threads):
    lm.manual_seed(0)
    model, (x, y) = _Residual(), _data()
    plan = compile(model, F.cross_entropy, (x, y), threads=threads)
    notes = plan.describe()
    assert "-> BiasAdd(Linear(x, W), b)" in notes and "-> BiasGELU(Linear(x, W), b)" in notes
    assert_plan_tracks_eager(model, plan, x, y)


class _TwoLinears(nn.Module):
    """a(x) + b(x): the sum an RNN cell makes of its input's and its state's products."""

    def __init__(self):
        super().__init__()
        self.a, self.b, self.head = nn.Linear(8, 16), nn.Linear(8, 16), nn.Linear(16, 5)

    def forward(self, x):
        return self.head(self.a(x) + self.b(x))


def test_a_sum_of_two_linears_takes_one_of_their_biases():
    lm.manual_seed(0)
    model, (x, y) = _TwoLinears(), _data()
    plan = compile(model, F.cross_entropy, (x, y))
    assert [n.name for n in plan.last.forward].count("BiasAdd") == 1
    assert_plan_tracks_eager(model, plan, x, y)


class _ReadTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 32), nn.Linear(32, 5)

    def forward(self, x):
        h = self.a(x)
        return self.b(F.gelu(h) + h)


@pytest.mark.parametrize("case", ["tanh", "no bias", "read twice", "float64"])
def test_where_it_does_not_apply_the_ops_stay(case):
    if case == "read twice":
        lm.manual_seed(0)
        model = _ReadTwice()
    else:
        model = _block(nn.GELU(approximate="tanh") if case == "tanh" else nn.GELU(),
                       bias=case != "no bias", dtype=np.float64 if case == "float64" else
                       np.float32)
    x, y = _data(np.float64 if case == "float64" else np.float32)
    plan = compile(model, F.cross_entropy, (x, y))
    assert "BiasGELU" not in plan.describe()
    assert_plan_tracks_eager(model, plan, x, y)
