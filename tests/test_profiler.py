"""lamina.profiler against PyTorch's: the same schedule, the same table columns, the same
calls counted and shapes recorded for the ops both name alike, ranges that nest, traces
that load, and nothing recorded (or left switched on) outside a profile."""

from __future__ import annotations

import gzip
import json
import re
import warnings

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
from lamina import state

torch = pytest.importorskip("torch")
tprof = pytest.importorskip("torch.profiler")


def _model(lib):
    return lib.nn.Sequential(lib.nn.Linear(64, 32), lib.nn.ReLU(), lib.nn.Linear(32, 10))


def _profiled(lib, **options):
    model, x = _model(lib), lib.ones(16, 64)
    with lib.profiler.profile(**options) as prof:
        with lib.profiler.record_function("model_inference"):
            loss = model(x).sum()
        loss.backward()
    return prof


@pytest.mark.parametrize("cycle", [dict(wait=1, warmup=1, active=2),
                                   dict(wait=0, warmup=0, active=1, repeat=2),
                                   dict(wait=2, warmup=1, active=3, repeat=1, skip_first=3),
                                   dict(wait=1, warmup=0, active=2, skip_first=1,
                                        skip_first_wait=1)])
def test_the_schedule_is_pytorchs(cycle):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        ours, theirs = lm.profiler.schedule(**cycle), tprof.schedule(**cycle)
    assert len(seen) == (2 if cycle["warmup"] == 0 else 0)  # both warn of no warmup
    assert [ours(i).name for i in range(20)] == [theirs(i).name for i in range(20)]


@pytest.mark.parametrize("acc_events", [False, True])
def test_a_scheduled_loop_saves_the_same_steps_as_pytorch(acc_events):
    saved = {}
    for lib in (torch, lm):
        model, x, seen = _model(lib), lib.ones(4, 64), []

        def ready(prof, seen=seen):
            steps = [e.name for e in prof.events() if e.name.startswith("ProfilerStep")]
            calls = sum(r.count for r in prof.key_averages() if r.key == "AddmmBackward0")
            seen.append((prof.step_num, steps, calls))

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch's about acc_events, once a process
            with lib.profiler.profile(
                    schedule=lib.profiler.schedule(wait=1, warmup=1, active=2, repeat=2),
                    on_trace_ready=ready, acc_events=acc_events) as prof:
                for _ in range(9):
                    model(x).sum().backward()
                    prof.step()
        saved[lib.__name__] = seen
    assert saved["lamina"] == saved["torch"]
    assert [step for step, _, _ in saved["lamina"]] == [4, 8]


@pytest.mark.parametrize("options, group", [({}, False), ({"profile_memory": True}, False),
                                            ({"record_shapes": True}, True)])
def test_the_table_has_pytorchs_columns(options, group):
    heads = []
    for lib in (torch, lm):
        table = _profiled(lib, **options).key_averages(group_by_input_shape=group).table(
            sort_by="cpu_time_total", row_limit=5)
        lines = table.splitlines()
        assert set(lines[0]) == set(lines[2]) == set(lines[-2]) == {"-", " "}
        assert re.fullmatch(r"Self CPU time total: [\d.]+(us|ms|s)", lines[-1])
        assert len(lines) == 5 + 5  # three rules, the header, five rows, the total
        heads.append(re.split(r"\s{2,}", lines[1].strip()))
    assert heads[0] == heads[1]


def test_calls_and_shapes_of_the_ops_both_name_alike_agree_with_pytorch():
    rows = {}
    for lib in (torch, lm):
        averages = _profiled(lib, record_shapes=True).key_averages(group_by_input_shape=True)
        rows[lib.__name__] = {(r.key, str(r.input_shapes)): r.count for r in averages}
    for key in [("model_inference", "[]"), ("AddmmBackward0", "[[16, 32]]"),
                ("AddmmBackward0", "[[16, 10]]")]:
        assert rows["lamina"][key] == rows["torch"][key] == 1
    # lamina's Linear op is PyTorch's aten::linear, with the same input shapes
    theirs = sorted(s for k, s in rows["torch"] if k == "aten::linear")
    assert sorted(s for k, s in rows["lamina"] if k == "Linear") == theirs


def test_ranges_nest_and_times_add_up():
    prof = _profiled(lm)
    events = prof.events()
    outer = next(e for e in events if e.name == "model_inference")
    inside = [e for e in events if e.cpu_parent is outer]
    assert {e.name for e in inside} == {"Linear", "ReLU", "Sum"}
    assert all(outer.time_range[0] <= e.time_range[0] <= e.time_range[1] <= outer.time_range[1]
               for e in inside)
    assert outer.self_cpu_time_total == pytest.approx(
        outer.cpu_time_total - sum(e.cpu_time_total for e in inside))
    averages = prof.key_averages()
    assert sum(r.self_cpu_time_total for r in averages) == pytest.approx(
        sum(e.self_cpu_time_total for e in events))
    percents = re.findall(r"\s([\d.]+)%\s", averages.table())
    assert sum(float(p) for p in percents[::2]) == pytest.approx(100, abs=0.1)


def test_memory_is_the_bytes_each_op_returns():
    prof = _profiled(lm, profile_memory=True)
    linear = [e for e in prof.events() if e.name == "Linear"]
    assert [e.cpu_memory_usage for e in linear] == [16 * 32 * 4, 16 * 10 * 4]
    outer = next(e for e in prof.events() if e.name == "model_inference")
    assert outer.cpu_memory_usage == sum(e.cpu_memory_usage for e in outer.cpu_children)
    assert outer.self_cpu_memory_usage == 0


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_the_chrome_trace_loads_and_holds_every_event(tmp_path, suffix):
    prof = _profiled(lm, record_shapes=True)
    path = prof.export_chrome_trace(tmp_path / f"trace{suffix}")
    opener = gzip.open if suffix.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)["traceEvents"]
    assert [e["name"] for e in trace] == [e.name for e in prof.events()]
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= 0 for e in trace)
    assert trace[0]["cat"] == "user_annotation" and trace[1]["cat"] == "cpu_op"
    assert trace[1]["args"]["Input Dims"] == [[16, 64], [32, 64], [32]]


def test_nothing_is_recorded_outside_a_profile_nor_left_on_by_an_error():
    with lm.profiler.record_function("alone"):  # no profile: a no-op
        lm.ones(2).exp()
    assert state.profiler is None
    with pytest.raises(ZeroDivisionError), lm.profiler.profile() as prof:
        lm.ones(2).exp()
        raise ZeroDivisionError
    assert state.profiler is None and [e.name for e in prof.events()] == ["Exp"]
    lm.ones(2).exp()
    assert [e.name for e in prof.events()] == ["Exp"]


def test_record_function_decorates_and_the_older_api_answers():
    @lm.profiler.record_function("step")
    def step(x):
        return x.exp().sum()

    with lm.autograd.profiler.profile(record_shapes=True) as prof:
        step(lm.ones(3))
    assert [(e.name, e.cpu_parent and e.cpu_parent.name) for e in prof.function_events] == [
        ("step", None), ("Exp", "step"), ("Sum", "step")]
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in prof.function_events))
    assert "Exp" in prof.table()
    with lm.autograd.profiler.profile(enabled=False) as off:
        step(lm.ones(3))
    assert len(off.function_events) == 0


def test_a_bad_sort_key_names_the_choices():
    with pytest.raises(ValueError, match="self_cpu_time_total"):
        _profiled(lm).key_averages().table(sort_by="cuda_time")


def test_profiling_changes_no_value_or_gradient():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    grads = []
    for on in (False, True):
        lm.manual_seed(0)
        model = _model(lm)
        with lm.profiler.profile(record_shapes=True, profile_memory=True) if on else \
                lm.autograd.profiler.profile(enabled=False):
            model(lm.tensor(x)).square().mean().backward()
        grads.append([p.grad.numpy().copy() for p in model.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)
    assert isinstance(nn.Linear(2, 2), nn.Module)
