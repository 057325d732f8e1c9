"""Execution plans: equal to eager, pruned, memory-planned, re-traced, and honest about limits."""

from __future__ import annotations

import numpy as np
import pytest
from layer_cases import MODEL_CASES, flat_outputs
from plan_cases import (
    assert_plan_tracks_eager,
    batch,
    bn_net,
    close,
    eager_and_planned,
    fit_compiled_and_eager,
    sgd_weights,
)

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
from lamina.plan import compile


def _square_loss(out, y):
    outs = flat_outputs(out)
    total = (outs[0] * outs[0]).mean()
    for o in outs[1:]:
        total = total + (o * o).mean()
    return total




@pytest.mark.parametrize("mode", ["train", "eval"])
@pytest.mark.parametrize("name", sorted(MODEL_CASES))
def test_planned_step_equals_eager_for_every_layer(name, mode) -> None:
    cfg, make = MODEL_CASES[name]
    lm.manual_seed(1)
    model = getattr(nn.from_config(cfg), mode)()
    x = lm.tensor(make(np.random.default_rng(0)))
    planned, eager = eager_and_planned(model, _square_loss, x, lm.tensor(np.zeros(1, np.float32)))
    assert planned[0] == pytest.approx(eager[0], rel=1e-6)
    for n in eager[1]:
        if eager[1][n] is None:  # e.g. the RBM's visible bias plays no part in forward
            assert planned[1][n] is None
        else:
            close(planned[1][n], eager[1][n])
    for k in eager[2]:  # batch-norm statistics and counters updated the same way
        close(planned[2][k], eager[2][k], 1e-6)


def _cnn():
    return nn.Sequential(nn.Conv1d(1, 8, 5, padding=2), nn.BatchNorm1d(8), nn.ReLU(),
                         nn.MaxPool1d(2), nn.Flatten(), nn.Dropout(0.3), nn.Linear(80, 10))


def test_fifty_planned_steps_give_the_weights_of_fifty_eager_steps() -> None:
    rng = np.random.default_rng(0)
    batches = [(lm.tensor(rng.standard_normal((16, 1, 20)).astype(np.float32)),
                lm.tensor(rng.integers(0, 10, 16))) for _ in range(50)]
    weights = []
    for planned in (True, False):
        lm.manual_seed(0)
        model = _cnn()
        weights.append(sgd_weights(model, batches, compile(model, F.cross_entropy)
                                   if planned else None))
    for k in weights[1]:
        close(weights[0][k], weights[1][k], 1e-4)


def test_a_tuned_plan_picks_a_kernel_per_op_and_still_equals_eager() -> None:
    lm.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 10))
    rng = np.random.default_rng(0)
    x = lm.tensor(rng.standard_normal((32, 20)).astype(np.float32))
    y = lm.tensor(rng.integers(0, 10, 32))
    step = compile(model, F.cross_entropy, (x, y), tune=True)
    linears = [n for n in step.last.forward if n.name == "Linear"]
    assert len(linears) == 3
    for node in linears:  # every variant was timed; the one kept is shown by describe()
        assert node.fn.variant in node.fn.variants
        assert f"<{node.fn.variant}>" in step.describe()
    start = {k: v.clone() for k, v in model.state_dict().items()}  # a snapshot: state_dict() shares memory
    for variant in linears[0].fn.variants:  # each kernel gives eager's loss and gradients
        for node in linears:
            node.fn.variant = variant
        model.load_state_dict(start)
        model.zero_grad()
        loss = step(x, y).item()
        grads = [p.grad.copy() for p in model.parameters()]
        model.zero_grad()
        eager = F.cross_entropy(model(x), y)
        eager.backward()
        assert loss == pytest.approx(eager.item(), rel=1e-6)
        for got, p in zip(grads, model.parameters()):
            close(got, p.grad)
        assert step.output.shape == (32, 10)


def test_inference_plan_runs_forward_only() -> None:
    lm.manual_seed(0)
    model = _cnn().eval()
    x = lm.tensor(np.random.default_rng(0).standard_normal((4, 1, 20)).astype(np.float32))
    plan = compile(model, example_batch=(x,))
    np.testing.assert_array_equal(plan(x).array, model(x).array)
    program = plan.last
    assert program.backward == [] and "backward" not in plan.describe()
    assert not any(any(n.fn.needs_input_grad) for n in program.forward)
    assert all(p.grad is None for p in model.parameters())


def test_nodes_that_do_not_reach_the_output_are_pruned() -> None:
    class WithUnusedBranch(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            self.debug = F.tanh(x).exp()  # computed, never used by the output
            return self.fc(x)

    model = WithUnusedBranch()
    x = lm.tensor(np.ones((2, 4), np.float32))
    plan = compile(model, F.cross_entropy, (x, lm.tensor(np.array([0, 1]))))
    text = plan.describe()
    assert "pruned: Tanh#0, Exp#1" in text
    forward = text.split("\npruned")[0]
    assert "Tanh" not in forward and "Exp" not in forward and "Linear" in forward


def test_an_unused_output_is_freed_before_backward() -> None:
    import weakref

    made = []

    class TwoOutputs(lm.Function):  # the second output is big and nobody reads it
        def forward(self, x):
            big = np.ones((256, 256), x.dtype)
            made.append(weakref.ref(big))
            return x * 2, big[0]  # a view: it alone would keep all of big alive

        def backward(self, gy, gbig):
            return gy * 2

    class Model(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(TwoOutputs().apply(x)[0])

    x = lm.tensor(np.ones((2, 4), np.float32))
    plan = compile(Model(), F.cross_entropy, (x, lm.tensor(np.array([0, 1]))))
    alive = []
    plan.last.after_forward = lambda: alive.append(made[-1]() is not None)
    plan(x, lm.tensor(np.array([0, 1])))
    assert alive == [False]


def test_ops_keep_inputs_that_outlive_them_instead_of_copies() -> None:
    # The model's output is returned by the plan, so cross-entropy keeps those scores
    # and redoes its log-softmax in backward instead of holding a second (N, C) array.
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    x = lm.tensor(np.ones((5, 4), np.float32))
    y = lm.tensor(np.array([0, 1, 2, 0, 1]))
    plan = compile(model, F.cross_entropy, (x, y))
    ce = next(n for n in plan.last.forward if n.name == "CrossEntropy")
    kept = []
    plan.last.after_forward = lambda: kept.append(ce.fn.saved_tensors)
    plan(x, y)
    logp, scores, _ = kept[0]
    assert 0 in ce.fn.inputs_kept and logp is None
    np.testing.assert_array_equal(scores, plan.output.array)
    assert ce.fn.saved_tensors == ()  # dropped once its backward has read them


def test_relu_then_max_pool_is_rewritten_and_stays_exact() -> None:
    # Windows with all values negative, with zeros, and with ties at the maximum: where
    # the order of max and ReLU could matter, if anywhere.
    x = np.array([[[[-3, -1, 2, 2], [-2, -5, 1, 0], [0, -1, 4, -4], [0, 0, 4, 3]]]], np.float32)
    model = nn.Sequential(nn.Conv2d(1, 1, 1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(4, 3))
    model[0].weight.array[...] = 1  # an identity convolution whose gradient sees the routing
    model[0].bias.array[...] = 0
    xt, y = lm.tensor(np.concatenate([x, -x, x * 0.5])), lm.tensor(np.array([0, 1, 2]))
    plan = compile(model, F.cross_entropy, (xt, y))
    assert "rewritten: MaxPool#2(ReLU#1(x)) -> ReLU(MaxPool(x))" in plan.describe()
    forward = plan.describe().split("rewritten")[0]
    assert forward.index("MaxPool") < forward.index("ReLU")
    planned, eager = eager_and_planned(model, F.cross_entropy, xt, y)
    assert planned[0] == eager[0]
    for name in eager[1]:  # bit for bit, not merely close
        np.testing.assert_array_equal(planned[1][name], eager[1][name])


def test_relu_read_by_another_op_is_not_rewritten() -> None:
    class Both(nn.Layer):
        def forward(self, x):
            r = F.relu(x)
            return F.max_pool2d(r, 2).sum() + r.sum()

    x = lm.tensor(np.random.default_rng(0).standard_normal((1, 1, 4, 4)).astype(np.float32),
                  requires_grad=True)
    plan = compile(Both(), example_batch=(x,))
    assert "rewritten" not in plan.describe()


def test_gradients_nobody_needs_are_never_computed() -> None:
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    model[0].weight.requires_grad = False  # frozen
    model[0].bias.requires_grad = False
    x = lm.tensor(np.ones((2, 4), np.float32))
    plan = compile(model, F.cross_entropy, (x, lm.tensor(np.array([0, 1]))))
    program = plan.last
    assert [n.name for n in program.backward] == ["CrossEntropy", "Linear"]
    first = program.forward[0]
    assert first.fn.needs_input_grad == (False, False, False)
    plan(x, lm.tensor(np.array([0, 1])))
    assert model[0].weight.grad is None and model[2].weight.grad is not None


def test_buffers_are_reused_and_memory_is_reported() -> None:
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                          nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    x = lm.tensor(np.ones((16, 32), np.float32))
    plan = compile(model, F.cross_entropy, (x, lm.tensor(np.zeros(16, np.int64))))
    memory = plan.memory()
    assert memory["bytes_with_reuse"] < memory["bytes_without_reuse"]
    program = plan.last
    assert len(set(program.slots.values())) < len(program.slots)  # values share buffers
    assert memory["pooled_buffers"] == len(set(program.slots.values()))
    text = plan.describe()
    assert "Linear         input0" in text and "ReLU           v4 -> v5 (16, 64) [slot 0]" in text


def test_a_compiled_plan_holds_one_steps_activations_not_the_traces() -> None:
    """Tracing and the analysis each run the forward: what they made must be freed, so a
    compiled plan holds what its last step kept (at most the live peak), and so does a
    tuned plan whose tuning ran many steps."""
    import tracemalloc

    model = nn.Sequential(nn.Linear(256, 1024), nn.Tanh(), nn.Linear(1024, 1024), nn.Tanh(),
                          nn.Linear(1024, 1024), nn.Tanh(), nn.Linear(1024, 10))
    x = lm.tensor(np.ones((512, 256), np.float32))
    y = lm.tensor(np.zeros(512, np.int64))
    for tune in (False, True):
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            plan = compile(model, F.cross_entropy, (x, y), tune=tune)
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        live = plan.memory()["bytes_with_reuse"]
        assert live > 5e6
        assert held < 1.2 * live, (tune, held, live)


def test_a_training_plans_analysis_holds_no_more_than_a_run(monkeypatch) -> None:
    """The analysis runs the forward to see what each op keeps: each activation no
    backward reads is dropped after its last reader, as in a run, so the analysis holds
    the plan's live peak, not every activation at once (16 of 2 MB here)."""
    import tracemalloc

    from lamina.plan import program

    peaks = []
    analyse = program.Program.__init__

    def measured(self, *args, **kwargs):
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        analyse(self, *args, **kwargs)
        peaks.append(tracemalloc.get_traced_memory()[1] - before)

    monkeypatch.setattr(program.Program, "__init__", measured)
    model = nn.Sequential(*[m for _ in range(8) for m in (nn.Linear(1024, 1024), nn.Tanh())],
                          nn.Linear(1024, 10))
    x = lm.tensor(np.ones((512, 1024), np.float32))
    y = lm.tensor(np.zeros(512, np.int64))
    tracemalloc.start()
    try:
        plan = compile(model, F.cross_entropy, (x, y))
    finally:
        tracemalloc.stop()
    live = plan.memory()["bytes_with_reuse"]
    assert len(peaks) == 1 and live > 16e6
    assert peaks[0] < 1.1 * live, (peaks[0], live)


def test_an_inference_plan_compiles_and_runs_in_an_eager_forwards_memory() -> None:
    """Without a backward, tracing and the analysis drop each activation after its last
    reader, as an eager forward without gradients does, and the plan's ops keep nothing
    between runs (GELU's saved input and Phi are for a backward that never comes). Eight
    blocks make 16 activations of 0.5 MB; all of them at once would be 8 MB."""
    import tracemalloc

    lm.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(8) for m in (nn.Linear(512, 512), nn.GELU())])
    model.eval()
    x = lm.tensor(np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32))
    with lm.no_grad():
        want = model(x).array
    one = want.nbytes
    tracemalloc.start()
    try:
        plan = compile(model, example_batch=(x,))
        compiled = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        got = plan(x).array
        before = tracemalloc.get_traced_memory()[0]
        plan(x)
        ran, held = tracemalloc.get_traced_memory()[1], tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(got, want)
    assert compiled < 6 * one, compiled / one
    assert ran < 6 * one, ran / one
    assert held - before < one // 8  # a run leaves behind what the one before it did
    assert not any(n.fn.saved_tensors for n in plan.last.forward)


def test_extents_compare_memory_as_numpy_does_after_the_arrays_are_gone() -> None:
    """The analysis records where each value's array lay and may free it: two records
    overlap where np.may_share_memory says the arrays may, and an array allocated after
    another was freed never overlaps it, even at the same address."""
    from lamina.plan.liveness import Extents, overlap

    where = Extents()
    a = np.zeros((8, 8), np.float32)
    views = [a, a[2:4], a[4:6], a.T, a[:, 0], a[1:, 1:], np.asarray(memoryview(a)),
             np.zeros(3, np.float32)]
    records = [where.of(v) for v in views]
    for u, eu in zip(views, records):
        for v, ev in zip(views, records):
            assert overlap(eu, ev) == np.may_share_memory(u, v)
    assert where.of(a[:0]) is None
    gone = np.ones(4096, np.float32)
    first = where.of(gone)
    del gone
    later = np.ones(4096, np.float32)  # often at the address the first one had
    assert not overlap(first, where.of(later))
    assert overlap(where.of(later), where.of(later[10:]))


def test_compiling_leaves_no_record_on_the_parameters() -> None:
    """The analysis watches each allocation it meets, parameters' arrays included; the
    watch ends with the compile, not with the parameter (else every compile of a model
    that lives long, one per batch shape, would leave one behind)."""
    import gc
    import weakref

    model = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 2)).eval()
    for n in range(1, 21):
        x = lm.tensor(np.ones((n, 8), np.float32))
        compile(model, example_batch=(x,))(x)
    gc.collect()
    assert weakref.getweakrefs(model[0].weight.array) == []


def test_a_new_shape_traces_again_and_a_known_one_does_not() -> None:
    model = nn.Sequential(nn.Linear(4, 3))
    plan = compile(model, F.cross_entropy)
    for n in (2, 2, 5, 2, 5):
        plan(lm.tensor(np.ones((n, 4), np.float32)), lm.tensor(np.zeros(n, np.int64)))
    assert plan.traces == 2 and len(plan.programs) == 2
    model.eval()
    plan(lm.tensor(np.ones((2, 4), np.float32)), lm.tensor(np.zeros(2, np.int64)))
    assert plan.traces == 3  # eval mode is another program


def test_programs_are_kept_for_the_most_recent_signatures_only() -> None:
    model = nn.Sequential(nn.Linear(4, 3), nn.Tanh())
    plan = compile(model)
    plan.max_programs = 3

    def run(n):
        x = np.arange(n * 4, dtype=np.float32).reshape(n, 4) / 10
        np.testing.assert_allclose(plan(lm.tensor(x)).array, model(lm.tensor(x)).array, rtol=1e-6)

    for n in (1, 2, 3):
        run(n)
    run(1)  # used again: now the most recent
    with pytest.warns(RuntimeWarning, match=r"more than 3 input signatures .* Pad inputs"):
        run(4)  # drops the least recently used, n=2
    assert plan.traces == 4 and len(plan.programs) == 3
    run(1)
    run(3)
    assert plan.traces == 4  # kept
    run(2)
    assert plan.traces == 5  # dropped, so traced again; the warning is given once


def test_freezing_a_parameter_after_compiling_traces_again() -> None:
    model, (x, y) = bn_net(), batch()
    plan = compile(model, F.cross_entropy, (x, y))
    model[0].weight.requires_grad = False
    assert_plan_tracks_eager(model, plan, x, y)
    assert model[0].weight.grad is None and plan.traces == 2
    model[0].weight.requires_grad = True  # back to the first program, cached
    assert_plan_tracks_eager(model, plan, x, y)
    assert model[0].weight.grad is not None and plan.traces == 2


def test_one_layer_put_in_eval_mode_after_compiling_traces_again() -> None:
    model, (x, y) = bn_net(), batch()
    plan = compile(model, F.cross_entropy, (x, y))
    model[1].eval()  # fine-tuning with frozen batch-norm statistics
    stats = model[1].running_mean.array.copy()
    assert_plan_tracks_eager(model, plan, x, y)
    np.testing.assert_array_equal(model[1].running_mean.array, stats)
    assert plan.traces == 2


def test_a_layer_setting_changed_after_compiling_traces_again() -> None:
    class Tempered(nn.Layer):  # a temperature a schedule anneals, read as a Python float
        def __init__(self) -> None:
            super().__init__()
            self.fc, self.tau = nn.Linear(4, 3), 1.0

        def forward(self, x):
            return self.fc(x) / self.tau

    model, (x, y) = nn.Sequential(Tempered(), nn.Dropout(0.5)), batch()
    plan = compile(model, F.cross_entropy, (x, y))
    model[0].tau = 0.25
    assert_plan_tracks_eager(model, plan, x, y)
    model[1].p = 0.0
    assert_plan_tracks_eager(model, plan, x, y)
    assert plan.traces == 3
    model[0].tau, model[1].p = 1.0, 0.5  # the first settings again: the first program
    assert_plan_tracks_eager(model, plan, x, y)
    assert plan.traces == 3


def test_replacing_a_layer_or_a_buffer_array_drops_the_stale_programs() -> None:
    model, (x, y) = bn_net(), batch()
    plan = compile(model, F.cross_entropy, (x, y))
    model.eval()
    plan(x, y)
    assert len(plan.programs) == 2
    model.train()
    lm.manual_seed(4)
    setattr(model, "3", nn.Linear(8, 3))  # what model.head = nn.Linear(...) does
    assert_plan_tracks_eager(model, plan, x, y)
    assert len(plan.programs) == 1  # the train and eval programs of the old layer are gone
    model[1].running_var.array = np.full(8, 4.0, np.float32)  # a new array, not new values
    model.eval()
    assert_plan_tracks_eager(model, plan, x, y)
    assert plan.traces == 4


def test_a_new_buffer_array_is_seen_with_no_layer_attribute_assigned() -> None:
    # The plan re-reads the model only after a layer edit, or when a tensor's array or
    # requires_grad moved: a buffer given a new array, and nothing else, must count.
    model, (x, y) = bn_net(), batch()
    plan = compile(model, F.cross_entropy, (x, y))
    model.eval()
    assert_plan_tracks_eager(model, plan, x, y)
    traces = plan.traces
    model[1].running_mean.array = np.full(8, 0.5, np.float32)
    assert_plan_tracks_eager(model, plan, x, y)
    assert plan.traces == traces + 1
    model[1].running_mean.array[...] = 0.25  # new values in the same array: no new trace
    assert_plan_tracks_eager(model, plan, x, y)
    assert plan.traces == traces + 1


def test_compiling_changes_no_state() -> None:
    lm.manual_seed(3)
    model = _cnn()
    before, rng = {k: v.clone() for k, v in model.state_dict().items()}, lm.get_rng_state()
    x = lm.tensor(np.random.default_rng(0).standard_normal((8, 1, 20)).astype(np.float32))
    compile(model, F.cross_entropy, (x, lm.tensor(np.zeros(8, np.int64))))
    after = model.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)
    assert lm.get_rng_state() == rng and all(p.grad is None for p in model.parameters())


def test_trainer_compile_matches_eager_training() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 1, 20)).astype(np.float32)
    y = rng.integers(0, 10, 100)
    runs = fit_compiled_and_eager(_cnn, x, y, True, 3, 50)
    histories, weights = [r[0] for r in runs], [r[1] for r in runs]
    for a, b in zip(*histories):
        assert a["loss"] == pytest.approx(b["loss"], rel=1e-4)
        assert a["val_accuracy"] == pytest.approx(b["val_accuracy"], abs=0.011)
    for k in weights[1]:
        close(weights[0][k], weights[1][k], 1e-3)


def test_a_tuned_choice_leaves_the_default_only_beyond_the_margin() -> None:
    from lamina.plan.tune import pick

    assert pick({"a": 1.0, "b": 0.98}, "a", 0.03) == "a"  # 2% is within the noise
    assert pick({"a": 1.0, "b": 0.96, "c": 0.90}, "a", 0.03) == "c"
    assert pick({"a": 0.9, "b": 1.0}, "b", 0.10) == "b"  # exactly the margin: not beyond
    assert pick({"a": 0.89, "b": 1.0}, "b", 0.10) == "a"
