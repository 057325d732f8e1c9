"""The LSTM's and the GRU's recurrences as an MKL GEMM and one gate kernel a step
(recurrent_blas.py, numba_blas_steps.py, mkl_packed.py): where they run, and that they
give what PyTorch and lamina's other kernels give, on numba's threads and on one thread."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

import lamina as lm
import lamina.fused as fused
from lamina import parallel, thread_pools
from lamina.functions import recurrent_blas
from lamina.fused import mkl_blas, mkl_packed

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                       reason="numba is not installed (pip install 'lamina[fast]')"),
    pytest.mark.skipif(mkl_blas.backend() != "mkl",
                       reason="MKL is not installed or the CPU is not Intel's"),
]
RNG = np.random.default_rng(3)
# A step's product of 16 rows by an LSTM's (1024, 256) W_hh is mkl_blas.MIN_WORK
# multiply-adds: the smallest that takes this path. A GRU's (768, 256) needs 22 rows.
BATCH, HIDDEN = 16, 256
ROWS = {"LSTM": BATCH, "GRU": 22}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("rows, k, n", [(16, 256, 1024), (3, 70, 33)])
def test_a_packed_operand_times_any_rows_is_their_product(dtype, transposed, rows, k, n):
    b = RNG.standard_normal((n, k) if transposed else (k, n)).astype(dtype)
    b = b.T if transposed else b
    packed = mkl_packed.packed(b, rows)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for _ in range(2):  # the packed copy serves every product
        a = RNG.standard_normal((rows, k)).astype(dtype)
        out = np.full((rows, n), np.nan, dtype)
        assert packed.times(a, out) is out
        want = a.astype(np.float64) @ b.astype(np.float64)
        scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
        np.testing.assert_array_less(np.abs(out - want), tol * scale)


def test_what_cannot_be_packed_is_none():
    assert mkl_packed.packed(np.ones((4, 4), np.int32), 2) is None
    assert mkl_packed.packed(np.ones((2, 4, 4), np.float32), 2) is None
    assert mkl_packed.packed(np.ones((8, 8), np.float32)[::2, ::2], 2) is None  # no unit stride


def test_the_path_takes_steps_of_mkls_size():
    W = np.zeros((4 * HIDDEN, HIDDEN), np.float32)
    assert recurrent_blas.on_blas(BATCH, W)
    assert not recurrent_blas.on_blas(BATCH - 1, W)
    assert not recurrent_blas.on_blas(1, W)  # a batch of one stays numba_threaded's


def _spy(monkeypatch, cell="lstm"):
    """Record which of the kernels of this path run for `cell` ("lstm" or "gru")."""
    kernels, ran = fused.compiled(), []
    for name in (f"{cell}_gates_forward", f"{cell}_gates_forward_serial",
                 f"{cell}_gates_backward", f"{cell}_gates_backward_serial"):
        inner = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *a, inner=inner, name=name:
                            ran.append(name) or inner(*a))
    return ran


def _layer_and_pytorchs(x, layers, cell="LSTM"):
    lm.manual_seed(4)
    layer = getattr(lm.nn, cell)(x.shape[-1], HIDDEN, num_layers=layers)
    ref = getattr(torch.nn, cell)(x.shape[-1], HIDDEN, num_layers=layers)
    ref.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in layer.state_dict().items()})
    return layer, ref


def _run(module, x, tensor, infer):
    """Outputs, then (in training) the input's and every parameter's gradients."""
    xt = tensor(x)
    if infer:
        module.eval()
        with (lm.no_grad() if tensor is lm.tensor else torch.no_grad()):
            out, state = module(xt)
        states = state if isinstance(state, tuple) else (state,)
        return [np.asarray(v.detach().numpy()) for v in (out, *states)]
    xt.requires_grad_(True)
    out, state = module(xt)
    h, c = state if isinstance(state, tuple) else (state, state)
    (out.square().sum() + (h * c).sum()).backward()
    got = [out, h, c, xt.grad, *(p.grad for p in module.parameters())]
    return [np.asarray(v.detach().numpy()) for v in got]


@pytest.fixture
def threads(monkeypatch):
    """threads(where) runs lamina on two threads with numba's pool quiet, as
    lamina.runtime.tune_process sets it (the threaded kernels' condition; skips where
    that pool is not OpenMP), or on one ("one thread"); lamina's count is restored after."""
    before = lm.get_num_threads()

    def use(where):
        monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", thread_pools.BLAS_THREAD_TIMEOUT)
        monkeypatch.setenv("GOMP_SPINCOUNT", thread_pools.OMP_SPIN)
        lm.set_num_threads(1 if where == "one thread" else 2)
        if where == "two threads" and fused.threaded_parts() != 2:
            pytest.skip("numba's thread pool is not OpenMP here")

    yield use
    lm.set_num_threads(before)


def _on(where, step):
    """step() on this thread, or as a task of lamina's split beside an idle one."""
    return parallel.run_all([step, lambda: 0])[0] if where == "in a task" else step()


@pytest.mark.parametrize("where", ["two threads", "one thread", "in a task"])
@pytest.mark.parametrize("infer", [False, True])
def test_the_steps_match_pytorch(monkeypatch, threads, where, infer):
    """By rows on numba's threads, serial on lamina's one thread or in a share of a split
    step; in eval mode too (the inference op hands its steps to the same recurrence)."""
    x = RNG.standard_normal((7, BATCH, 12)).astype(np.float32)
    lstm, ref = _layer_and_pytorchs(x, 2)
    ran = _spy(monkeypatch)
    threads(where)
    got = _on(where, lambda: _run(lstm, x, lm.tensor, infer))
    kind = "" if where == "two threads" else "_serial"
    assert ran == [f"lstm_gates_forward{kind}"] * 7 * 2 + (
        [] if infer else [f"lstm_gates_backward{kind}"] * 7 * 2)
    want = _run(ref, x, torch.from_numpy, infer)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("where", ["two threads", "one thread"])
def test_the_steps_agree_with_numbas_own_product(monkeypatch, threads, where):
    """The same gates as numba_threaded's kernels, which compute the product themselves
    (by rows on two threads, serial on one): only the products' order of sums differs."""
    threads(where)
    for cell in ("LSTM", "GRU"):
        x = RNG.standard_normal((5, ROWS[cell], 9)).astype(np.float32)
        layer, _ = _layer_and_pytorchs(x, 1, cell)
        ran = _spy(monkeypatch, cell.lower())
        got = _run(layer, x, lm.tensor, False)
        assert len(ran) == 10
        for p in layer.parameters():
            p.grad = None
        with monkeypatch.context() as m:
            m.setattr(recurrent_blas, "on_blas", lambda rows, W_hh: False)
            want = _run(layer, x, lm.tensor, False)
        assert len(ran) == 10
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("where", ["two threads", "in a task"])
def test_the_grus_steps_match_pytorch(monkeypatch, threads, where):
    """The GRU's forward and backward steps, biased and not (PyTorch's bias=False)."""
    x = RNG.standard_normal((6, ROWS["GRU"], 10)).astype(np.float32)
    for bias in (True, False):
        lm.manual_seed(2)
        gru = lm.nn.GRU(10, HIDDEN, num_layers=2, bias=bias)
        ref = torch.nn.GRU(10, HIDDEN, num_layers=2, bias=bias)
        ref.load_state_dict({k: torch.from_numpy(np.asarray(v))
                             for k, v in gru.state_dict().items()})
        ran = _spy(monkeypatch, "gru")
        threads(where)
        got = _on(where, lambda gru=gru: _run(gru, x, lm.tensor, False))
        kind = "" if where == "two threads" else "_serial"
        assert ran == [f"gru_gates_forward{kind}"] * 12 + [f"gru_gates_backward{kind}"] * 12
        want = _run(ref, x, torch.from_numpy, False)
        for a, b in zip(got, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("vocab, steps", [(20, 6), (300, 20)])
def test_a_plans_lookup_into_the_steps_matches_pytorch(monkeypatch, vocab, steps):
    """An embedding read by the LSTM alone: the plan's LSTMLookupSequence looks each
    step's x-gates up in the gate kernel, and sums the table's gradient by id there
    where the table is small (20 rows), after the steps where it is not (300 rows of
    4 KB are past LOOKUP_SUM_BYTES)."""
    ids = RNG.integers(0, vocab, (BATCH, steps))
    target = RNG.integers(0, 10, (BATCH, steps))
    model, ref = _language_model(lm, vocab), _language_model(torch, vocab)
    ref.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in model.state_dict().items()})

    def loss_fn(out, y):
        return lm.nn.functional.cross_entropy(out.reshape(-1, 10), y.reshape(-1))

    plan = lm.plan.compile(model, loss_fn, (lm.tensor(ids), lm.tensor(target)))
    assert "LSTMLookupSequence" in [n.name for n in plan._latest().forward]
    ran = _spy(monkeypatch)
    loss = plan(lm.tensor(ids), lm.tensor(target))
    assert ran[0].startswith("lstm_gates_forward") and len(ran) == 2 * steps
    want = torch.nn.functional.cross_entropy(ref(torch.from_numpy(ids)).reshape(-1, 10),
                                             torch.from_numpy(target).reshape(-1))
    want.backward()
    np.testing.assert_allclose(float(loss), want.item(), rtol=1e-5)
    for (name, p), q in zip(model.named_parameters(), ref.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=2e-5,
                                   err_msg=name)


def _language_model(t, vocab):
    """An embedding, an LSTM and a linear head, in framework t (lamina or torch)."""
    t.manual_seed(0)

    class Model(t.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = t.nn.Embedding(vocab, 32)
            self.lstm = t.nn.LSTM(32, HIDDEN, batch_first=True)
            self.head = t.nn.Linear(HIDDEN, 10)

        def forward(self, idx):
            return self.head(self.lstm(self.embed(idx))[0])

    return Model()


@pytest.mark.parametrize("where", ["two threads", "in a task"])
def test_a_split_steps_backward_packs_no_weight(monkeypatch, threads, where):
    """In a share of a split step, the backward's products are a GEMM a step: each share
    would hold its own packed W_hh at the step's peak memory. Elsewhere the forward's
    and the backward's are both packed (W_hh.T, then W_hh)."""
    packed, inner = [], mkl_packed.packed
    monkeypatch.setattr(mkl_packed, "packed", lambda b, rows: packed.append(
        "W_hh" if b.flags.c_contiguous else "W_hh.T") or inner(b, rows))
    x = RNG.standard_normal((4, BATCH, 8)).astype(np.float32)
    lstm, ref = _layer_and_pytorchs(x, 1)
    threads(where)
    got = _on(where, lambda: _run(lstm, x, lm.tensor, False))
    assert packed == (["W_hh.T"] if where == "in a task" else ["W_hh.T", "W_hh"])
    for a, b in zip(got, _run(ref, x, torch.from_numpy, False), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)
