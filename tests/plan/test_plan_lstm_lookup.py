"""The lookup that feeds an LSTM's recurrence, looked up inside it
(functions/recurrent_lookup.py, the plan's lookup_into_lstm): the op bit for bit against
embedding + lstm_sequence on every path the recurrence takes, its gradients against
float64 central differences, its errors, and the plan's rewrite."""

from __future__ import annotations

import numpy as np
import pytest
from plan_cases import assert_plan_tracks_eager

import lamina as lm
import lamina.functions as F
import lamina.fused as fused
import lamina.nn as nn
from lamina import thread_pools
from lamina.errors import ShapeError
from lamina.functions import recurrent, recurrent_lookup
from lamina.functions.connection import sum_rows_by_id
from lamina.functions.recurrent_lookup import LSTMLookupSequence
from lamina.fused import numba_threaded
from lamina.plan import compile

REWRITTEN = "LSTMLookupSequence(ids, G)"
LOOKED_UP = "LSTMLookupSequence v"  # the op among the plan's steps


def _inputs(T, B, H, V, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, V, (T, B))
    arrays = [rng.standard_normal(s).astype(dtype) * 0.5
              for s in ((V, 4 * H), (B, H), (B, H), (4 * H, H), (4 * H,))]
    return ids, arrays


def _run(ids, arrays, looked_up):
    """Outputs and gradients (table, h0, c0, W_hh, b_hh) of one forward and backward."""
    table, *rest = (lm.tensor(a, requires_grad=True) for a in arrays)
    if looked_up:
        outs = LSTMLookupSequence().apply(lm.tensor(ids), table, *rest)
    else:
        outs = F.lstm_sequence(F.embedding(lm.tensor(ids), table), *rest)
    weights = np.random.default_rng(9).standard_normal(outs[0].shape).astype(arrays[0].dtype)
    ((outs[0] * lm.tensor(weights)).sum() + (outs[1] * outs[2]).sum()).backward()
    return [o.detach().numpy() for o in outs] + [t.grad.numpy() for t in (table, *rest)]


def _path(monkeypatch, path):
    """Make the recurrence take `path`; skip where this machine cannot. Threads as
    lamina.runtime.tune_process leaves them: the threaded kernels' condition."""
    if path == "numpy":
        monkeypatch.setattr(fused, "compiled", lambda: None)
        return
    if fused.compiled() is None:
        pytest.skip("numba is not installed (pip install 'lamina[fast]')")
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", thread_pools.BLAS_THREAD_TIMEOUT)
    monkeypatch.setenv("GOMP_SPINCOUNT", thread_pools.OMP_SPIN)
    lm.set_num_threads(2 if path in ("rows", "units") else 1)
    if path == "units":
        monkeypatch.setattr(numba_threaded, "ROWS_MAX_WEIGHT_BYTES", -1)
    if path in ("rows", "units") and fused.threaded_parts() != 2:
        pytest.skip("numba's thread pool is not OpenMP here")
    kernels, ran = fused.compiled(), []
    for name in ("lstm_forward_rows", "lstm_forward_threaded", "lstm_forward_serial"):
        inner = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *a, inner=inner, name=name:
                            ran.append(name) or inner(*a))
    return ran


@pytest.fixture
def threads_back():
    before = lm.get_num_threads()
    yield
    lm.set_num_threads(before)


@pytest.mark.parametrize("path, B", [("rows", 5), ("units", 5), ("serial", 5),
                                     ("blas", 40), ("numpy", 5)])
@pytest.mark.parametrize("large_table", [False, True])
def test_equals_embedding_then_lstm_sequence(monkeypatch, threads_back, path, B, large_table):
    """The x-gates looked up in the kernel are the lookup's values: outputs and every
    gradient are equal bit for bit, but the table's where the compiled backward kernels
    (threaded or serial) sum it as they go (a small table), in another order than
    embedding's backward."""
    ran = _path(monkeypatch, path)
    summed_apart = []
    monkeypatch.setattr(recurrent_lookup, "sum_rows_by_id",
                        lambda *a: summed_apart.append(1) or sum_rows_by_id(*a))
    if large_table:
        monkeypatch.setattr(recurrent, "LOOKUP_SUM_BYTES", 4 * 24 * 4 - 1)
    ids, arrays = _inputs(7, B, 6, V=4)
    in_kernel = path in ("rows", "units", "serial") and not large_table
    got, want = _run(ids, arrays, True), _run(ids, arrays, False)
    for k, (a, b) in enumerate(zip(got, want, strict=True)):
        if k == 3 and in_kernel:  # the table's gradient
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        else:
            np.testing.assert_array_equal(a, b)
    assert summed_apart == ([] if in_kernel else [1])
    kernel = {"rows": "lstm_forward_rows", "units": "lstm_forward_threaded",
              "serial": "lstm_forward_serial"}.get(path)
    assert ran == ([kernel] * 2 if kernel else [] if path == "blas" else None)


def test_gradients_match_central_differences() -> None:
    ids, arrays = _inputs(4, 3, 2, V=3, dtype=np.float64, seed=1)
    tensors = [lm.tensor(a, requires_grad=True) for a in arrays]
    assert lm.gradcheck(lambda *xs: LSTMLookupSequence().apply(lm.tensor(ids), *xs), tensors)


@pytest.mark.parametrize("ids, error, words", [
    (np.array([[0, 3]]), IndexError, "[0, 3)"),
    (np.array([[0.0, 1.0]]), TypeError, "integers"),
    (np.array([0, 1]), ShapeError, "ids (T, B)"),
])
def test_bad_ids_are_named(ids, error, words) -> None:
    _, arrays = _inputs(1, 2, 2, V=3)
    with pytest.raises(error, match="lstm_lookup_sequence") as info:
        LSTMLookupSequence().apply(lm.tensor(ids), *(lm.tensor(a) for a in arrays))
    assert words in str(info.value)


class CharModel(nn.Module):
    """A character-level language model, its LSTM batch-first or time-major."""

    def __init__(self, batch_first=True, padding_idx=None, layers=1):
        super().__init__()
        self.embed = nn.Embedding(16, 8, padding_idx=padding_idx)
        self.lstm = nn.LSTM(8, 12, num_layers=layers, batch_first=batch_first)
        self.head = nn.Linear(12, 16)
        self.batch_first = batch_first

    def forward(self, ids):
        x = self.embed(ids if self.batch_first else ids.transpose(0, 1))
        return self.head(self.lstm(x)[0]).reshape(-1, 16)


@pytest.mark.parametrize("batch_first, layers", [(True, 1), (False, 1), (True, 2)])
def test_a_language_model_plan_looks_up_in_the_recurrence_and_tracks_eager(
        batch_first, layers) -> None:
    lm.manual_seed(3)
    model = CharModel(batch_first, layers=layers)
    ids = lm.tensor(np.random.default_rng(4).integers(0, 16, (4, 10)))
    targets = lm.tensor(np.random.default_rng(5).integers(0, 16, 40))
    plan = compile(model, F.cross_entropy, (ids, targets))
    # the first layer's alone; nn.LSTM makes the op itself (recurrent_lookup.looked_up)
    assert plan.describe().count(LOOKED_UP) == 1
    assert_plan_tracks_eager(model, plan, ids, targets)


class GatesModel(nn.Module):
    """x-gates looked up in a table of its own by F.lstm_sequence's input, and where
    `twice`, read by a second term of the output too."""

    def __init__(self, twice):
        super().__init__()
        rng = np.random.default_rng(6)
        self.table = nn.Parameter(rng.standard_normal((16, 48)).astype(np.float32) * 0.5)
        self.W_hh = nn.Parameter(rng.standard_normal((48, 12)).astype(np.float32) * 0.5)
        self.head = nn.Linear(12, 16)
        self.twice = twice

    def forward(self, ids):
        gates = F.embedding(ids.transpose(0, 1), self.table)
        h0 = lm.zeros(ids.shape[0], 12)
        out = self.head(F.lstm_sequence(gates, h0, h0, self.W_hh)[0])
        return (out + gates.sum() if self.twice else out).reshape(-1, 16)


@pytest.mark.parametrize("case", ["padding_idx", "lookup read twice", "lookup read once"])
def test_not_rewritten_where_it_does_not_hold(case) -> None:
    lm.manual_seed(2)
    model = (CharModel(padding_idx=0) if case == "padding_idx"
             else GatesModel(twice=case == "lookup read twice"))
    ids = lm.tensor(np.random.default_rng(4).integers(0, 16, (4, 10)))
    targets = lm.tensor(np.random.default_rng(5).integers(0, 16, 40))
    plan = compile(model, F.cross_entropy, (ids, targets))
    assert (REWRITTEN in plan.describe()) == (case == "lookup read once")
    assert_plan_tracks_eager(model, plan, ids, targets)


def test_an_lstm_reading_a_lookup_read_twice_looks_its_gates_up_in_the_recurrence():
    """The rows feed a second term of the output: nn.LSTM looks its x-gates up in the
    projected table all the same (recurrent_lookup.looked_up)."""
    lm.manual_seed(2)
    model = CharModel()
    model.forward = lambda t: (lambda x: model.head(model.lstm(x)[0]) + x.sum())(
        model.embed(t)).reshape(-1, 16)
    ids = lm.tensor(np.random.default_rng(4).integers(0, 16, (4, 10)))
    targets = lm.tensor(np.random.default_rng(5).integers(0, 16, 40))
    plan = compile(model, F.cross_entropy, (ids, targets))
    assert plan.describe().count(LOOKED_UP) == 1
    assert_plan_tracks_eager(model, plan, ids, targets)
