"""What a trace follows from batch to batch (masks, indices, comparisons) and what it
refuses rather than freezes (Python control flow on tensors, raw data, outside state)."""

from __future__ import annotations

import numpy as np
import pytest
from plan_cases import Custom, assert_plan_tracks_eager, batch, bn_net, close, eager_and_planned

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
from lamina.plan import TraceError, compile


def test_control_flow_on_a_tensor_is_reported_with_its_line() -> None:
    def branchy(self, x):
        h = self.fc(x)
        if h.sum() > 0:
            return F.relu(h)
        return F.tanh(h)

    x = lm.tensor(np.ones((2, 4), np.float32))
    with pytest.raises(TraceError, match=r"bool\(\).*traced value at .*test_plan_tracing\.py:\d+ "
                                         r"\(if h\.sum\(\) > 0:\)"):
        compile(Custom(branchy, 2), F.cross_entropy, (x, lm.tensor(np.array([0, 1]))))


def test_control_flow_through_raw_data_is_caught_by_a_second_trace() -> None:
    def sneaky(self, x):
        h = self.fc(x)
        return F.relu(h) if h.array.sum() > 0 else F.tanh(h)

    model = Custom(sneaky, 2)
    model.fc.weight.array[...] = 1.0  # the branch follows the sign of the input's sum
    model.fc.bias.array[...] = 0.0
    x = lm.tensor(np.ones((2, 4), np.float32))
    with pytest.raises(TraceError, match=r"ops depend on the input values \(op 1 is ReLU for "
                                         r"one input and Tanh for another\)"):
        compile(model, F.cross_entropy, (x, lm.tensor(np.array([0, 1]))))


def test_a_mask_made_by_comparing_the_batch_is_made_again_for_every_batch() -> None:
    # The fix the control-flow error suggests: compute the branch with masks. A plan that
    # froze the example's mask as a constant passed its own check on the example batch.
    def masked(self, x):
        h = self.fc(F.where(x > 0, x, 0.1 * x))
        h = F.maximum(h * (h <= 0.5), F.minimum(h, -0.2))
        return h + (x[:, :3] == 0).astype("float32")

    model, (x, y) = Custom(masked), batch()
    plan = compile(model, F.cross_entropy, (x, y))
    for seed in range(3):
        other = lm.tensor(np.random.default_rng(seed).standard_normal((6, 4)).astype(np.float32))
        other.array[0, :2] = 0.0
        assert_plan_tracks_eager(model, plan, other, y)
    assert plan.traces == 1
    steps = plan.describe().split("backward")
    assert steps[0].count("Compare") == 3 and "Compare" not in steps[1]  # no gradient
    inference = compile(model, example_batch=(x,))
    np.testing.assert_array_equal(inference(other).array, model(other).array)


@pytest.mark.parametrize("make", [
    lambda x: lm.tensor((x.array > 0).astype(np.float32)),  # the batch's values, untraced
    lambda x: lm.tensor(np.random.default_rng().standard_normal(x.shape).astype(np.float32)),
    # lamina's own generator: the second trace draws other numbers, so these are caught
    lambda x: lm.randn_like(x),
    lambda x: lm.rand(*x.shape),
    lambda x: lm.full_like(x, 0.5).bernoulli(),
    lambda x: lm.randint(0, 2, tuple(x.shape), dtype=lm.float32),
])
def test_a_tensor_made_from_raw_data_or_at_random_is_refused_not_frozen(make) -> None:
    with pytest.raises(TraceError, match=r"op 0 \(Mul\) reads a tensor of shape \(6, 4\) made "
                                         r"during the call that differs from one batch to "
                                         r"another.*Compute it with tensor ops"):
        compile(Custom(lambda self, x: self.fc(x * make(x))), F.cross_entropy, batch())


@pytest.mark.parametrize("repeated", [False, True])
@pytest.mark.parametrize("make", [
    lambda x: lm.tensor((x.array > 0).astype(np.float32)),
    lambda x: lm.randn_like(x),
])
def test_a_split_checks_each_slice_against_other_values(make, repeated) -> None:
    """A split's first slice is checked against its second, whose values differ; where
    they do not (a batch of one row repeated), against perturbed values of its own."""
    x, y = batch()
    if repeated:
        x, y = lm.tensor(np.repeat(x.array[:1], 6, axis=0)), lm.tensor(np.repeat(y.array[:1], 6))
    with pytest.raises(TraceError, match=r"op 0 \(Mul\) reads a tensor of shape \(3, 4\) made "
                                         r"during the call that differs from one batch to "
                                         r"another"):
        compile(Custom(lambda self, x: self.fc(x * make(x))), F.cross_entropy, (x, y),
                threads=2)


def test_ops_that_draw_draw_anew_at_every_planned_step() -> None:
    model = Custom(lambda self, x: F.gumbel_softmax(F.rrelu(self.fc(x), training=True)))
    x, y = batch()
    plan = compile(model, F.cross_entropy, (x, y))
    assert_plan_tracks_eager(model, plan, x, y)  # the same draws from the same seed
    assert len({plan(x, y).item() for _ in range(3)}) == 3  # and new ones at each step


def test_indexing_with_the_batch_labels_follows_every_batch() -> None:
    def picked_nll(out, y):  # a loss written by hand: -log p[i, y_i]
        rows = lm.tensor(np.arange(y.shape[0]))
        return -F.log_softmax(out, axis=1)[rows, y].mean()

    model, (x, y) = bn_net(), batch()
    plan = compile(model, picked_nll, (x, y))
    for labels in ([2, 1, 0, 0, 1, 2], [0, 0, 0, 1, 1, 1]):
        other = lm.tensor(np.array(labels))
        planned, eager = eager_and_planned(model, picked_nll, x, other, step=plan)
        assert planned[0] == pytest.approx(eager[0], rel=1e-6)
        for n, g in eager[1].items():
            close(planned[1][n], g)
    assert plan.traces == 1
    assert "GetItem        v" in plan.describe() and ", input1 ->" in plan.describe()


@pytest.mark.parametrize("forward, what", [
    (lambda x: x[x > 0], r"indexing with a boolean tensor at .*test_plan_tracing\.py:\d+ .* shape "
                         r"depends on the batch's values"),
    (lambda x: x * 2 if x[0, 0] else x, r"bool\(\) .* on a traced value"),
    (lambda x: x * float(np.asarray(x).max()), r"np\.asarray\(\) on a traced value"),
])
def test_reading_the_batch_in_python_is_refused(forward, what) -> None:
    with pytest.raises(TraceError, match=what):
        compile(Custom(lambda self, x: forward(x)), example_batch=(batch()[0],))


def test_outside_state_and_stateful_layers_split_over_threads_are_refused() -> None:
    kept = lm.tensor(np.ones((1, 3), np.float32))

    class ReadsOutside(nn.Layer):
        def forward(self, x):
            return x * kept

    with pytest.raises(TraceError, match=r"made before the traced call"):
        compile(ReadsOutside(), example_batch=(lm.tensor(np.ones((2, 3), np.float32)),))
    with pytest.raises(TraceError, match=r"layer 0 is stateful, .*threads=2 cannot split"):
        compile(nn.Sequential(nn.LSTM(2, 2, output="sequence", stateful=True, batch_first=True)), threads=2)


def _chunked(model, plan, x, y, loss_fn, bounds):
    """Loss, gradients and carried state after each chunk of truncated BPTT."""
    steps = []
    for lo, hi in bounds:
        xc, yc = lm.tensor(x[:, lo:hi]), lm.tensor(y[:, lo:hi])
        if plan is not None:
            loss = plan(xc, yc)
        else:
            loss = loss_fn(model(xc), yc)
            loss.backward()
        state = model[1].state
        steps.append([loss.array, *(p.grad for p in model.parameters()),
                      *(s.array for s in (state if isinstance(state, tuple) else (state,)))])
        model[1].detach_state()
        model.zero_grad()
    return steps


@pytest.mark.parametrize("layer", [nn.RNN, nn.GRU, nn.LSTM])
def test_a_stateful_layer_carries_its_state_through_a_plan(layer) -> None:
    """The carried state goes into a planned step as an input and comes back as the
    layer's new state: chunks of truncated BPTT (from zeros, carried, a shorter last one,
    then reset) give eager mode's losses, gradients and states, from three programs."""
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 5, (4, 14)), rng.integers(0, 5, (4, 14))
    bounds = [(0, 5), (5, 10), (10, 14), (0, 5)]

    def loss_fn(out, target):
        return F.cross_entropy(out.reshape(-1, 5), target.reshape(-1))

    runs = []
    for planned in (False, True):
        lm.manual_seed(0)
        model = nn.Sequential(nn.Embedding(5, 8), layer(8, 16, num_layers=2, batch_first=True,
                                                        output="sequence", stateful=True),
                              nn.Linear(16, 5))
        plan = compile(model, loss_fn) if planned else None
        runs.append(_chunked(model, plan, x, y, loss_fn, bounds[:3]))
        model[1].reset_state()
        runs[-1] += _chunked(model, plan, x, y, loss_fn, bounds[3:])
    for eager, planned in zip(*runs):
        for a, b in zip(eager, planned):
            close(b, a)
    assert len(plan.programs) == 3 and plan.traces == 3
    np.testing.assert_array_equal(runs[1][3][0], runs[1][0][0])  # reset: zeros again


def test_an_inference_plan_carries_state_too() -> None:
    lm.manual_seed(0)
    model = nn.Sequential(nn.Embedding(5, 8), nn.GRU(8, 8, batch_first=True, output="sequence",
                                                     stateful=True))
    x = np.random.default_rng(1).integers(0, 5, (3, 8))
    with lm.no_grad():
        want = [model(lm.tensor(x[:, :4])).array, model(lm.tensor(x[:, 4:])).array]
        final = model[1].state.array
    model[1].reset_state()
    plan = compile(model)
    got = [plan(lm.tensor(x[:, :4])).array, plan(lm.tensor(x[:, 4:])).array]
    for a, b in zip(want + [final], got + [model[1].state.array]):
        close(b, a)


def test_a_tensor_counted_from_the_ids_is_refused_not_frozen() -> None:
    # Order-invariant: reversing the batch alone leaves the counts as they were.
    def counted(self, ids):
        counts = np.bincount(ids.array.ravel(), minlength=4)[:4].astype(np.float32)
        return self.fc(lm.tensor(counts) * ids[:, :1].astype("float32"))

    ids = lm.tensor(np.array([[0, 1], [1, 2], [3, 1], [2, 0]]))
    with pytest.raises(TraceError, match=r"reads a tensor of shape \(4,\) made during the call"):
        compile(Custom(counted), example_batch=(ids,))


def test_a_buffer_the_forward_reads_is_read_afresh_at_every_step() -> None:
    """nanoGPT's registered causal mask, a registered scale: buffers, not constants."""
    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.register_buffer("mask", lm.tril(lm.ones(8, 8)))
            self.register_buffer("scale", lm.ones(3), persistent=False)
            self.register_buffer("unused", None)

        def forward(self, x):
            h = self.fc(x) * self.scale
            return h.masked_fill(self.mask[: len(x), :3] == 0, -1.0)

    model = Masked()
    x, y = batch()
    plan = compile(model, F.cross_entropy, (x, y))
    assert_plan_tracks_eager(model, plan, x, y)
    model.scale.numpy()[:] = 3.0  # written in place, as a user or a callback may
    assert_plan_tracks_eager(model, plan, x, y)
    assert plan.traces == 1
