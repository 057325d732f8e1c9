"""Plans that split the batch over threads: equal to eager, and refusing what a split breaks."""

from __future__ import annotations

import numpy as np
import pytest
from plan_cases import close, fit_compiled_and_eager, sgd_weights

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
from lamina.plan import TraceError, compile

_close = close


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Linear(36, 10))


class _Tagger(nn.Layer):
    """Embedding + LSTM over a sequence + a linear read-out at every step."""

    def __init__(self) -> None:
        super().__init__()
        self.embed, self.lstm = nn.Embedding(12, 6), nn.LSTM(6, 8, output="sequence", batch_first=True)
        self.out = nn.Linear(8, 12)

    def forward(self, x):
        return self.out(self.lstm(self.embed(x))).reshape(-1, 12)


def _batch(name, n, rng):
    if name == "mlp":
        return rng.standard_normal((n, 20)).astype(np.float32), rng.integers(0, 10, n)
    if name == "cnn":
        return rng.standard_normal((n, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, n)
    return rng.integers(0, 12, (n, 5)), rng.integers(0, 12, (n, 5))


MODELS = {
    "mlp": (lambda: nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 10)),
            F.cross_entropy),
    "cnn": (_cnn, F.cross_entropy),
    "lstm": (_Tagger, lambda out, y: F.cross_entropy(out, y.reshape(-1))),
    "transformer": (lambda: nn.Sequential(
        nn.Embedding(12, 8), nn.PositionalEncoding(8, max_len=5, batch_first=True),
        nn.Residual(nn.LayerNorm(8), nn.SelfAttention(8, 2, causal=True, batch_first=True)),
        nn.Linear(8, 12)), lambda out, y: F.cross_entropy(out.reshape(-1, 12), y.reshape(-1))),
}


def _eager(model, loss_fn, x, y):
    model.zero_grad()
    out = model(x)
    loss = loss_fn(out, y)
    loss.backward()
    grads = [p.grad.copy() for p in model.parameters()]
    model.zero_grad()
    return loss.item(), out.array, grads


@pytest.mark.parametrize("threads, n", [(2, 16), (3, 7), (4, 3)])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_a_split_step_equals_the_eager_step(name, threads, n) -> None:
    lm.manual_seed(0)
    make, loss_fn = MODELS[name]
    model = make()
    x, y = (lm.tensor(a) for a in _batch(name, n, np.random.default_rng(1)))
    want_loss, want_out, want_grads = _eager(model, loss_fn, x, y)
    step = compile(model, loss_fn, (x, y), threads=threads)
    loss = step(x, y)
    parts = min(threads, n)
    assert step.describe().startswith(f"batch split over {parts} threads")
    assert loss.item() == pytest.approx(want_loss, rel=1e-6)
    _close(step.output.array, want_out)
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, want)
    step(x, y)  # gradients accumulate across calls, as eager backward's do
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, 2 * want)


def test_ten_split_steps_give_the_weights_of_ten_eager_steps() -> None:
    rng = np.random.default_rng(0)
    batches = [tuple(lm.tensor(a) for a in _batch("cnn", 12, rng)) for _ in range(10)]
    weights = []
    for threads in (2, None):
        lm.manual_seed(0)
        model = _cnn()
        weights.append(sgd_weights(model, batches, compile(model, F.cross_entropy,
                                                           threads=threads)
                                   if threads else None, lr=0.1))
    for k in weights[1]:
        _close(weights[0][k], weights[1][k], 1e-4)


def test_parameters_handed_one_gradient_array_get_their_own_sums() -> None:
    # p1 + p2 hands both the same array as gradient; the split sums each slice's into
    # the first slice's array, which must not then be p1's and p2's at once.
    class Biased(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.p1 = nn.Parameter(lm.tensor(np.full(3, 0.5, np.float32)))
            self.p2 = nn.Parameter(lm.tensor(np.full(3, -0.25, np.float32)))

        def forward(self, x):
            return self.fc(x) + (self.p1 + self.p2)

    lm.manual_seed(0)
    model = Biased()
    rng = np.random.default_rng(3)
    x = lm.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    y = lm.tensor(rng.integers(0, 3, 8))
    _, _, want = _eager(model, F.cross_entropy, x, y)
    step = compile(model, F.cross_entropy, (x, y), threads=2)
    assert step.describe().startswith("batch split over 2 threads")
    step(x, y)
    for p, g in zip(model.parameters(), want):
        _close(p.grad, g)
    assert model.p1.grad.array is not model.p2.grad.array


def test_a_summed_loss_weighs_each_slice_by_one() -> None:
    lm.manual_seed(0)
    model = MODELS["mlp"][0]()
    x, y = (lm.tensor(a) for a in _batch("mlp", 9, np.random.default_rng(2)))

    def loss_fn(out, y):
        return (out * out).sum()

    want_loss, _, want_grads = _eager(model, loss_fn, x, y)
    step = compile(model, loss_fn, (x, y), threads=2)
    assert "loss weights 1, 1" in step.describe()
    assert step(x, y).item() == pytest.approx(want_loss, rel=1e-6)
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, want)


def test_a_loss_neither_mean_nor_sum_over_rows_is_refused() -> None:
    model = MODELS["mlp"][0]()
    x, y = (lm.tensor(a) for a in _batch("mlp", 8, np.random.default_rng(3)))

    def loss_fn(out, y):
        m = (out * out).mean()
        return m * m

    with pytest.raises(TraceError, match="neither a mean nor a sum over its rows"):
        compile(model, loss_fn, (x, y), threads=2)


def test_compiling_a_split_runs_the_model_three_times() -> None:
    """Compiling a split of equal slices runs the model (counted by a forward pre-hook)
    three times: the two slices' traces, each checked against the other's (their values
    differ), and the eager step the plan is checked against, whose loss with the traces'
    gives the slices' weights. A slice of another shape is checked on other values of
    its own. Tuned, the whole step's program (its trace and its check) compiles next,
    checked against the same eager step's outcome: the eager step runs once."""
    calls = []
    model = MODELS["mlp"][0]()
    model.register_forward_pre_hook(lambda module, args: calls.append(len(args[0])))
    x, y = (lm.tensor(a) for a in _batch("mlp", 8, np.random.default_rng(4)))
    want_loss, _, want_grads = _eager(model, F.cross_entropy, x, y)
    calls.clear()
    step = compile(model, F.cross_entropy, (x, y), threads=2)
    assert step(x, y).item() == pytest.approx(want_loss, rel=1e-6)
    assert calls == [4, 4, 8]
    assert "loss weights 0.5, 0.5" in step.describe()
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, want)
    calls.clear()
    x, y = (lm.tensor(a) for a in _batch("mlp", 7, np.random.default_rng(5)))
    compile(model, F.cross_entropy, (x, y), threads=2)(x, y)
    assert calls == [3, 3, 4, 4, 7]
    calls.clear()
    compile(model, F.cross_entropy, (x, y), threads=2, tune=True)
    assert calls == [3, 3, 4, 4, 7, 7, 7]


@pytest.mark.parametrize("name", ["cnn", "lstm", "transformer"])
def test_equal_slices_share_one_analysis_and_equal_eager(monkeypatch, name) -> None:
    """The second of two equal slices takes the first's liveness and kernel hints instead
    of probing its forward twice; a slice of another shape probes its own."""
    from lamina.plan.program import Program

    probes = []
    inner = Program._liveness
    monkeypatch.setattr(Program, "_liveness", lambda self: probes.append(self) or inner(self))
    make, loss_fn = MODELS[name]
    model = make()
    x, y = (lm.tensor(a) for a in _batch(name, 8, np.random.default_rng(2)))
    want_loss, _, want_grads = _eager(model, loss_fn, x, y)
    step = compile(model, loss_fn, (x, y), threads=2)
    first, second = next(iter(step.programs.values())).programs
    assert second.live is first.live and probes and all(p is first for p in probes)
    for n, m in zip(first.forward, second.forward):
        assert (getattr(n.fn, "dead_inputs", None), getattr(n.fn, "outputs_kept", None)) == \
            (getattr(m.fn, "dead_inputs", None), getattr(m.fn, "outputs_kept", None))
    assert step(x, y).item() == pytest.approx(want_loss, rel=1e-6)
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, want)
    probes.clear()
    x, y = (lm.tensor(a) for a in _batch(name, 7, np.random.default_rng(3)))
    step = compile(model, loss_fn, (x, y), threads=2)
    first, second = next(iter(step.programs.values())).programs
    assert second.live is not first.live and second in probes


@pytest.mark.parametrize("tune", [False, True])
def test_batch_norm_in_training_is_refused_by_name(tune) -> None:
    """Refused from the slices' traces, before any step on the whole batch runs."""
    x, y = (lm.tensor(a) for a in _batch("mlp", 8, np.random.default_rng(4)))
    bn = nn.Sequential(nn.Linear(20, 16), nn.BatchNorm1d(16), nn.Linear(16, 10))
    calls = []
    bn.register_forward_pre_hook(lambda module, args: calls.append(len(args[0])))
    with pytest.raises(TraceError, match=r"BatchNorm#\d+ computes statistics over the whole"):
        compile(bn, F.cross_entropy, (x, y), threads=2, tune=tune)
    assert calls and 8 not in calls


class _TwoLayerTagger(_Tagger):
    """_Tagger with a 2-layer LSTM: its dropout between layers is drawn time-major, over
    (T, N, H), so a slice's rows of it are along axis 1."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(6, 8, num_layers=2, dropout=0.5, output="sequence",
                            batch_first=True)


def _dropout_mlp():
    return nn.Sequential(nn.Linear(20, 16), nn.Dropout(0.5), nn.ReLU(), nn.Linear(16, 16),
                         nn.Dropout(0.3), nn.Linear(16, 10))


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("name", ["mlp", "lstm"])
def test_dropout_in_a_split_step_draws_eagers_masks(name, threads) -> None:
    lm.manual_seed(0)
    model, loss_fn = (_dropout_mlp(), F.cross_entropy) if name == "mlp" else \
        (_TwoLayerTagger(), MODELS["lstm"][1])
    x, y = (lm.tensor(a) for a in _batch(name, 10, np.random.default_rng(4)))
    step = compile(model, loss_fn, (x, y), threads=threads)
    assert step.describe().startswith(f"batch split over {threads} threads")
    read = []  # whether a slice's forward has let go of its draws, for each slice
    for program in step.runner.programs:
        program.after_forward = lambda ops=program.forward: read.append(
            all(getattr(n.fn, "drawn", None) is None for n in ops))
    for _ in range(3):  # each step draws new masks, the same as eager's from one seed
        state = lm.get_rng_state()
        want_loss, _, want_grads = _eager(model, loss_fn, x, y)
        after_eager = lm.get_rng_state()
        lm.set_rng_state(state)
        model.zero_grad()
        assert step(x, y).item() == pytest.approx(want_loss, rel=1e-6)
        for p, want in zip(model.parameters(), want_grads):
            _close(p.grad, want)
        assert lm.get_rng_state() == after_eager  # as many numbers drawn as eager drew
        # the batch's draws are freed once the slices have read them, the masks once
        # backward has
        assert all(getattr(n.fn, "drawn", None) is None and getattr(n.fn, "keep", None) is None
                   for program in step.runner.programs for n in program.forward)
        assert read == [True] * threads  # each slice's, once its forward has read them
        read.clear()
        model.zero_grad()


class _TimeMajor(nn.Layer):
    """Dropout over (steps, N, 4): the batch along axis 1. With 4 steps and slices of 4
    rows, axis 0 looks like the batch's too."""

    def __init__(self, steps: int) -> None:
        super().__init__()
        self.steps, self.drop, self.out = steps, nn.Dropout(0.5), nn.Linear(4, 10)

    def forward(self, x):
        return self.out(self.drop(x.reshape(-1, self.steps, 4).permute(1, 0, 2))).mean(axis=0)


def _time_major_batch(steps: int):
    x = lm.tensor(np.random.default_rng(0).standard_normal((8, 4 * steps)).astype(np.float32))
    return x, lm.tensor(np.zeros(8, np.int64))


@pytest.mark.parametrize("steps", [5, 4])
def test_dropout_over_a_batch_along_axis_1_draws_eagers_masks(steps) -> None:
    # With 4 steps, axis 0 is as long as a slice's 4 rows too: the first reading of the
    # draw is wrong, the check against eager refuses it, and the second is kept.
    lm.manual_seed(0)
    model, (x, y) = _TimeMajor(steps), _time_major_batch(steps)
    step = compile(model, F.cross_entropy, (x, y), threads=2)
    assert step.describe().startswith("batch split over 2 threads")
    state = lm.get_rng_state()
    want_loss, _, want_grads = _eager(model, F.cross_entropy, x, y)
    lm.set_rng_state(state)
    assert step(x, y).item() == pytest.approx(want_loss, rel=1e-6)
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, want)


class _Centred(nn.Layer):
    """Subtracts the batch's mean by hand: no op says it mixes rows; the slices' losses
    do not add up to the batch's."""

    def __init__(self) -> None:
        super().__init__()
        self.out = nn.Linear(20, 10)

    def forward(self, x):
        return self.out(x - x.mean(axis=0))


def test_a_split_that_mixes_rows_unannounced_is_refused() -> None:
    x, y = _time_major_batch(5)
    with pytest.raises(TraceError, match="neither a mean nor a sum"):
        compile(_Centred(), F.cross_entropy, (x, y), threads=2)


class _Reversed(nn.Layer):
    """Dropout over the batch in reverse order: each slice draws rows of the batch's
    draw, but not the rows eager gives its samples."""

    def __init__(self) -> None:
        super().__init__()
        self.drop, self.out = nn.Dropout(0.5), nn.Linear(20, 10)

    def forward(self, x):
        return self.out(self.drop(x.flip(0)).flip(0))


def test_a_split_whose_masks_are_not_eagers_is_caught() -> None:
    x, y = _time_major_batch(5)
    with pytest.raises(TraceError, match="does not reproduce the loss of the eager step"):
        compile(_Reversed(), F.cross_entropy, (x, y), threads=2)


def test_dropout_over_no_axis_of_slice_rows_is_refused_by_name() -> None:
    class Flat(nn.Layer):  # dropout over the batch flattened into one axis
        def __init__(self) -> None:
            super().__init__()
            self.drop, self.out = nn.Dropout(0.5), nn.Linear(20, 10)

        def forward(self, x):
            return self.out(self.drop(x.reshape(-1)).reshape(x.shape))

    x, y = _time_major_batch(5)
    with pytest.raises(TraceError, match=r"Dropout#\d+ draws random numbers over shapes"):
        compile(Flat(), F.cross_entropy, (x, y), threads=2)


def test_a_dropped_or_refused_plan_frees_its_programs_without_the_garbage_collector() -> None:
    """A program and its generated step must not form a reference cycle: else a plan
    dropped, or a split refused by verification, keeps its buffers and traces until
    Python's cycle collector happens to run (memory a fallback compile then adds to)."""
    import gc

    from lamina.plan.program import Program

    def programs() -> int:
        # type(), not isinstance: that reads __class__, which some objects warn on
        return sum(type(o) is Program for o in gc.get_objects())

    model, loss_fn = MODELS["lstm"]
    net = model()
    x, y = (lm.tensor(a) for a in _batch("lstm", 8, np.random.default_rng(0)))
    gc.collect()
    gc.disable()
    try:
        before = programs()  # those of other tests' plans still alive, if any
        plan = compile(net, loss_fn, (x, y), threads=2)
        plan(x, y)
        assert programs() > before
        del plan
        assert programs() == before
        x, y = _time_major_batch(5)  # a split refused after its programs compiled
        with pytest.raises(TraceError, match="neither a mean nor a sum"):
            compile(_Centred(), F.cross_entropy, (x, y), threads=2)
        assert programs() == before
    finally:
        gc.enable()


def test_batch_norm_in_eval_mode_splits_and_equals_eager() -> None:
    lm.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 10))
    x, y = (lm.tensor(a) for a in _batch("mlp", 8, np.random.default_rng(5)))
    model(x)  # running statistics away from their initial values
    model.eval()
    want_loss, _, want_grads = _eager(model, F.cross_entropy, x, y)
    step = compile(model, F.cross_entropy, (x, y), threads=2)
    assert step(x, y).item() == pytest.approx(want_loss, rel=1e-6)
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, want)


def test_a_split_inference_plan_joins_the_outputs() -> None:
    lm.manual_seed(0)
    model = _cnn()
    x = lm.tensor(_batch("cnn", 10, np.random.default_rng(6))[0])
    plan = compile(model, example_batch=(x,), threads=3)
    assert plan.describe().startswith("batch split over 3 threads, rows [0:3), [3:6), [6:10)")
    _close(plan(x).array, model(x).array)
    assert all(p.grad is None for p in model.parameters())


@pytest.mark.parametrize("threads", [1, 3])
def test_each_run_hands_out_outputs_the_next_run_leaves_alone(threads) -> None:
    """A split's joined outputs are handed out as they are, a whole program's copied out
    of its buffers: either way a result keeps its values through the next run."""
    lm.manual_seed(0)
    # The output: a view of ReLU's, which lies in a buffer of the program's
    model = nn.Sequential(nn.Linear(20, 12), nn.ReLU(), nn.Unflatten(1, (3, 4)))
    rng = np.random.default_rng(6)
    x1, x2 = (lm.tensor(_batch("mlp", 10, rng)[0]) for _ in range(2))
    plan = compile(model, example_batch=(x1,), threads=threads)
    first = plan(x1)
    kept = first.array.copy()
    second = plan(x2)
    assert not np.shares_memory(first.array, second.array)
    np.testing.assert_array_equal(first.array, kept)
    _close(second.array, model(x2).array)


def test_a_tuned_split_plan_keeps_the_faster_way_and_equals_eager() -> None:
    lm.manual_seed(0)
    model = _cnn()
    x, y = (lm.tensor(a) for a in _batch("cnn", 16, np.random.default_rng(7)))
    want_loss, _, want_grads = _eager(model, F.cross_entropy, x, y)
    step = compile(model, F.cross_entropy, (x, y), tune=True, threads=2)
    kept = step.programs[next(iter(step.programs))]
    assert type(kept).__name__ in ("Split", "Program")
    assert step(x, y).item() == pytest.approx(want_loss, rel=1e-6)
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, want)


def test_a_tuned_split_tunes_one_of_two_equal_slices(monkeypatch) -> None:
    """The second slice takes the first's kernel variants: tuning times the first slice
    and the whole step only. The tuner is the real one; after it, every kernel with
    variants is switched to its last, so that a copy is seen to be one."""
    import lamina.plan.compile_split as compile_split

    tuned = []

    def tune_and_mark(program):
        real_tune(program)
        tuned.append(program)
        for n in program.forward:
            if len(getattr(n.fn, "variants", ())) >= 2:
                n.fn.variant = n.fn.variants[-1]

    real_tune = compile_split.tune_variants
    monkeypatch.setattr(compile_split, "tune_variants", tune_and_mark)
    # The split kept whatever the timing says, so that its programs can be read.
    monkeypatch.setattr(compile_split, "split_over_whole", lambda *a, **k: 0.5)
    model = _cnn()
    x, y = (lm.tensor(a) for a in _batch("cnn", 16, np.random.default_rng(7)))
    want_loss, _, want_grads = _eager(model, F.cross_entropy, x, y)
    step = compile(model, F.cross_entropy, (x, y), tune=True, threads=2)
    first, second = next(iter(step.programs.values())).programs
    assert second.twin is first and tuned[0] is first and second not in tuned
    marked = [(n.fn.variant, m.fn.variant) for n, m in zip(first.forward, second.forward)
              if len(getattr(n.fn, "variants", ())) >= 2]
    assert marked and all(a == b == v for (a, b), v in zip(marked, [
        n.fn.variants[-1] for n in first.forward if len(getattr(n.fn, "variants", ())) >= 2]))
    assert step(x, y).item() == pytest.approx(want_loss, rel=1e-6)
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, want)


def test_the_split_and_the_whole_step_take_turns_when_timed() -> None:
    """On a machine that slows by a tenth from one timing to the next, a split 0.9 times
    the whole step's time times 0.9: each round's two timings meet the same drift, once
    in each order. Timed once each, one after the other, it would time 0.82 or 0.99.
    And only the runner being timed holds its buffers."""
    from lamina.plan.tune import split_over_whole

    class Runner:
        def __init__(self, cost):
            self.cost, self.held = cost, False

        def release_memory(self):
            self.held = False

    split, whole = Runner(0.9), Runner(1.0)
    clock, settles, turns = [1.0], {}, []

    def seconds(runner, settle):
        other = whole if runner is split else split
        assert not other.held
        runner.held = True
        settles[runner] = settle
        turns.append(runner)
        clock[0] *= 1.1
        return runner.cost * clock[0]

    assert split_over_whole(seconds, split, whole) == pytest.approx(0.9, rel=0.01)
    assert settles == {split: 0.1, whole: 0.1}  # both settle: see split_over_whole
    assert not split.held and not whole.held
    assert turns == [split, whole, whole, split, split, whole, whole, split]


def test_split_arguments_are_checked() -> None:
    model = MODELS["mlp"][0]()
    with pytest.raises(ValueError, match="threads must be an int >= 1"):
        compile(model, F.cross_entropy, threads=0)
    x = lm.tensor(_batch("mlp", 8, np.random.default_rng(8))[0])
    with pytest.raises(ValueError, match=r"splits every batch array along axis 0.*\(8, 20\), \(5,\)"):
        compile(model, F.cross_entropy, (x, lm.tensor(np.zeros(5, np.int64))), threads=2)


def _cnn_with_dropout():
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                         nn.Dropout(0.3), nn.Linear(36, 10))


@pytest.mark.parametrize("make", [_cnn, _cnn_with_dropout])
def test_a_trainer_with_split_plans_trains_as_an_eager_one(make) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((60, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, 60)
    runs = fit_compiled_and_eager(make, x, y, {"threads": 2}, 2, 25)
    histories, weights = [r[0] for r in runs], [r[1] for r in runs]
    plans = list(runs[0][2].algorithm.plans.values())
    assert len(plans) == 2 and all(p.threads == 2 for p in plans)  # train and eval
    assert all(type(r).__name__ == "Split" for p in plans for r in p.programs.values())
    for a, b in zip(*histories):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4)
        assert a["val_accuracy"] == pytest.approx(b["val_accuracy"], abs=1e-9)
    for k in weights[1]:
        _close(weights[0][k], weights[1][k], 1e-4)


def test_slices_that_trace_different_random_ops_are_refused() -> None:
    class OddRowsDrop(nn.Layer):  # a dropout only for an odd number of rows
        def __init__(self) -> None:
            super().__init__()
            self.drop, self.out = nn.Dropout(0.5), nn.Linear(20, 10)

        def forward(self, x):
            return self.out(self.drop(x) if x.shape[0] % 2 else x)

    x, y = (lm.tensor(a) for a in _batch("mlp", 7, np.random.default_rng(6)))
    with pytest.raises(TraceError, match="slices traced different ops"):
        compile(OddRowsDrop(), F.cross_entropy, (x, y), threads=2)  # slices of 3 and 4 rows


def test_a_split_step_whose_op_runs_in_pieces_itself_equals_eager() -> None:
    """GELU's erf runs in pieces over lamina's threads; inside a slice's thread it must
    run whole (and not hang waiting for the pool the slices occupy)."""
    lm.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 1 << 15), nn.GELU(), nn.Linear(1 << 15, 3))
    rng = np.random.default_rng(0)
    x, y = lm.tensor(rng.standard_normal((8, 6)).astype(np.float32)), lm.tensor(rng.integers(0, 3, 8))
    want_loss, want_out, want_grads = _eager(model, F.cross_entropy, x, y)
    step = compile(model, F.cross_entropy, (x, y), threads=2)
    assert step(x, y).item() == pytest.approx(want_loss, rel=1e-6)
    for p, want in zip(model.parameters(), want_grads):
        _close(p.grad, want)


def test_the_slices_gradients_add_up_in_pieces_over_threads(monkeypatch) -> None:
    """Gradients past two pieces' worth add up on two threads in one handoff; ones not
    laid flat alike (a transposed view) add up whole. Every sum equals NumPy's."""
    from lamina import parallel
    from lamina.plan.split import add_up

    monkeypatch.setattr(parallel, "get_num_threads", lambda: 2)
    handoffs = []
    run_all = parallel.run_all
    monkeypatch.setattr(parallel, "run_all", lambda tasks: handoffs.append(len(tasks))
                        or run_all(tasks))
    rng = np.random.default_rng(0)
    shapes = [(1000, 600), (300,), (400, 600)]
    totals = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    others = [[rng.standard_normal(s).astype(np.float32) for _ in range(2)] for s in shapes]
    others[2][1] = np.ascontiguousarray(others[2][1].T).T  # same values, transposed layout
    want = [t + a + b for t, (a, b) in zip(totals, others)]
    add_up(list(zip(totals, others)))
    assert handoffs == [2]
    for got, w in zip(totals, want):
        np.testing.assert_array_equal(got, w)
