"""A plan's rewrites of a linear layer: linear(embedding(ids, E), W, b) as
embedding(ids, linear(E, W, b)), and linear(transpose(x)) as transpose(linear(x)). The
step's loss and gradients against float64 central differences and against eager, and
where a plan does not rewrite."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from plan_cases import assert_plan_tracks_eager, eager_and_planned

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
from lamina.plan import compile

REWRITTEN = "Embedding(ids, Linear(E, W))"
MOVED = "Transpose(Linear(x))"


class Projected(nn.Module):
    """Embedding then Linear, the ids' two axes swapped between them or not."""

    def __init__(self, rows=6, width=5, out=7, bias=True, swap=False, padding_idx=None):
        super().__init__()
        self.embed = nn.Embedding(rows, width, padding_idx=padding_idx)
        self.proj = nn.Linear(width, out, bias=bias)
        self.swap = swap

    def forward(self, ids):
        x = self.embed(ids)
        return self.proj(x.transpose(0, 1) if self.swap else x)


def _squares(out, _):
    return (out * out).sum() / 2


def _ids(shape, rows=6, seed=0):
    return lm.tensor(np.random.default_rng(seed).integers(0, rows, shape))


def _float64(model):
    for p in model.parameters():
        p.array = p.array.astype(np.float64)
    return model


def _tracks_eager(model, plan, x, y, tol) -> None:
    """One planned and one eager step from the same state: the same loss and gradients."""
    (loss, grads, _), (eager_loss, eager_grads, _) = eager_and_planned(
        model, _squares, x, y, step=plan)
    assert loss == pytest.approx(eager_loss, rel=tol)
    for name, g in eager_grads.items():
        np.testing.assert_allclose(grads[name], g, rtol=tol, atol=tol)


def _central_differences(model, plan, x, y) -> None:
    """Every parameter's gradient from one planned step against central differences of
    the plan's own loss (float64)."""
    model.zero_grad()
    plan(x, y)
    grads = [np.array(p.grad).reshape(-1) for p in model.parameters()]  # runs below add to them
    for p, grad in zip(model.parameters(), grads):
        flat, want = p.array.reshape(-1), []
        for i in range(flat.size):
            keep = flat[i]
            flat[i] = keep + 1e-6
            up = plan(x, y).item()
            flat[i] = keep - 1e-6
            down = plan(x, y).item()
            flat[i] = keep
            want.append((up - down) / 2e-6)
        np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gradients_match_central_differences(swap, bias) -> None:
    lm.manual_seed(0)
    model, ids = _float64(Projected(bias=bias, swap=swap)), _ids((4, 3))
    plan = compile(model, _squares, (ids, ids))
    assert REWRITTEN in plan.describe()
    _central_differences(model, plan, ids, ids)


@pytest.mark.parametrize("swap", [False, True])
def test_equals_the_eager_step(swap) -> None:
    lm.manual_seed(1)
    model, ids = _float64(Projected(swap=swap)), _ids((4, 3))
    plan = compile(model, _squares, (ids, ids))
    assert REWRITTEN in plan.describe()
    _tracks_eager(model, plan, ids, ids, 1e-10)


@pytest.mark.parametrize("case", ["fewer ids than rows", "padding_idx", "read twice",
                                  "rows' axis moved"])
def test_not_rewritten_where_it_does_not_hold_or_pay(case) -> None:
    lm.manual_seed(2)
    ids = _ids((2, 2) if case == "fewer ids than rows" else (4, 3))
    model = Projected(padding_idx=0 if case == "padding_idx" else None)
    if case == "read twice":  # the lookup is an output of its own besides the product
        model.forward = lambda t: (lambda x: model.proj(x).sum() + x.sum())(model.embed(t))
    if case == "rows' axis moved":  # (4, 5, 3): the product runs over the ids' last axis
        model.proj = nn.Linear(3, 7)
        model.forward = lambda t: model.proj(model.embed(t).transpose(1, 2))
    plan = compile(model, _squares, (ids, ids))
    assert REWRITTEN not in plan.describe()
    _tracks_eager(model, plan, ids, ids, 1e-5)


class CharModel(nn.Module):
    """A character-level language model: 16 symbols, an LSTM, a projection per step."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.lstm = nn.LSTM(8, 12, batch_first=True)
        self.head = nn.Linear(12, 16)

    def forward(self, ids):
        return self.head(self.lstm(self.embed(ids))[0]).reshape(-1, 16)


@pytest.mark.parametrize("tune", [False, True])
def test_a_character_language_model_tracks_eager(tune) -> None:
    """nn.LSTM's input projection reads the lookup, its ids' axes swapped to time-major:
    eager nn.LSTM projects the table itself (recurrent_lookup.input_projection), the plan
    moves that lookup into the recurrence, and its step stays the eager step (float32)."""
    lm.manual_seed(3)
    model, ids = CharModel(), _ids((4, 10), rows=16, seed=4)
    targets = lm.tensor(np.random.default_rng(5).integers(0, 16, 40))
    plan = compile(model, F.cross_entropy, (ids, targets), tune=tune)
    steps = plan.describe()
    assert "Linear         param" in steps and "LSTMLookupSequence v" in steps
    assert_plan_tracks_eager(model, plan, ids, targets)


class TimeMajorHead(nn.Module):
    """A time-major LSTM read batch-first by a per-step linear head."""

    def __init__(self, width=6, out=4, axes=(1, 0, 2), features=None):
        super().__init__()
        self.lstm = nn.LSTM(3, width)
        self.head = nn.Linear(features or width, out)
        self.axes = axes

    def forward(self, x):
        return self.head(self.lstm(x)[0].permute(*self.axes))


def _sequence(seed=6, dtype=np.float64):
    """(time 5, batch 2, features 3)."""
    return lm.tensor(np.random.default_rng(seed).standard_normal((5, 2, 3)).astype(dtype))


def test_a_linear_moved_before_a_transpose_matches_central_differences() -> None:
    lm.manual_seed(5)
    model, x = _float64(TimeMajorHead()), _sequence()
    plan = compile(model, _squares, (x, x))
    assert MOVED in plan.describe()
    _central_differences(model, plan, x, x)
    _tracks_eager(model, plan, x, x, 1e-10)


@pytest.mark.parametrize("case", ["more features out", "features' axis moved"])
def test_a_linear_stays_after_a_transpose_where_moving_it_does_not_pay(case) -> None:
    lm.manual_seed(7)
    model = (TimeMajorHead(width=6, out=9) if case == "more features out"
             else TimeMajorHead(width=5, out=4, axes=(0, 2, 1), features=2))  # over the batch
    x = _sequence(dtype=np.float32)
    plan = compile(model, _squares, (x, x))
    assert MOVED not in plan.describe()
    _tracks_eager(model, plan, x, x, 1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bias", [True, False])
def test_one_row_of_inference_equals_eager(dtype, bias) -> None:
    """Batch-1 inference runs each linear layer's product alone (no checks, nothing kept):
    the same bits as eager, and float64's values."""
    lm.manual_seed(8)
    model = nn.Sequential(nn.Linear(9, 16, bias=bias), nn.ReLU(), nn.Linear(16, 3, bias=bias))
    for p in model.parameters():
        p.array = p.array.astype(dtype)
    model.eval()
    x = lm.tensor(np.random.default_rng(9).standard_normal((1, 9)).astype(dtype))
    plan = compile(model, example_batch=(x,))
    with lm.no_grad():
        want = model(x).numpy()
    for _ in range(2):  # the second run reuses the first's buffers
        got = plan(x).numpy()
        assert got.dtype == dtype and got.shape == (1, 3)
        np.testing.assert_array_equal(got, want)
    W1, W2 = (model[i].weight.array.astype(np.float64) for i in (0, 2))
    b1, b2 = ((model[i].bias.array.astype(np.float64) if bias else 0.0) for i in (0, 2))
    ref = np.maximum(x.numpy().astype(np.float64) @ W1.T + b1, 0) @ W2.T + b2
    np.testing.assert_allclose(got, ref, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("rows", [1, 4])
def test_a_non_finite_input_gives_no_numpy_warning(train, rows) -> None:
    """As in PyTorch (and eager lamina's linear layer), a product of an infinite input
    warns of nothing; the plan's step leaves NumPy's error settings as it found them."""
    lm.manual_seed(10)
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
    x = np.random.default_rng(11).standard_normal((rows, 4)).astype(np.float32)
    plan = (compile(model, _squares, (lm.tensor(x), lm.tensor(x))) if train
            else compile(model.eval(), example_batch=(lm.tensor(x),)))
    x[0, 1] = np.inf  # inf * a zero of BLAS's padding, or of the next layer's ReLU: NaN
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = plan(lm.tensor(x), lm.tensor(x)) if train else plan(lm.tensor(x))
    assert np.geterr() == before
    assert not np.isfinite(out.numpy()).all()
