"""lamina.fused's threaded LSTM steps (numba_threaded.py): where they run, and that they
give what the serial kernels, the NumPy path and PyTorch give."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from threaded_cases import record_calls, record_shares, run_lstm, use_threads

import lamina as lm
import lamina.fused as fused
from lamina import parallel, thread_pools

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")


def _assert_numpy_path_agrees(got, x, hidden, layers):
    """What run_lstm gives with lamina.fused's NumPy kernels is `got`, to float32 sums."""
    fused.set_backend("numpy")
    try:
        _, numpy_out = run_lstm(x, hidden, layers)
    finally:
        fused.set_backend(None)
    for a, b in zip(got, numpy_out, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)


def test_threaded_steps_need_quiet_pools_several_threads_and_no_split(quiet_pools,
                                                                      monkeypatch):
    use_threads(2)
    assert parallel.run_all([fused.threaded_parts, fused.threaded_parts]) == [1, 1]
    lm.set_num_threads(1)
    assert fused.threaded_parts() == 1
    lm.set_num_threads(2)
    monkeypatch.setenv("GOMP_SPINCOUNT", "300000")  # libgomp's own default
    assert fused.threaded_parts() == 1
    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT")
    monkeypatch.setenv("GOMP_SPINCOUNT", thread_pools.OMP_SPIN)
    assert fused.threaded_parts() == 1


@pytest.mark.parametrize("share", ["rows", "units"])
@pytest.mark.parametrize("parts", [2, 3])
@pytest.mark.parametrize("shape, hidden, layers", [
    ((9, 5, 7), 24, 1),  # an odd batch: the GEMM's rows in pairs and one left
    ((6, 4, 3), 10, 2),  # shares of 3-4 units, not a multiple of the GEMM's four rows
    ((5, 1, 6), 2, 1),  # fewer units than shares at 3, fewer rows than shares
])
def test_threaded_steps_agree_with_the_numpy_path(quiet_pools, monkeypatch, share, parts,
                                                  shape, hidden, layers):
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32)
    use_threads(parts)
    ran = record_shares(monkeypatch, share, "lstm")
    _, threaded = run_lstm(x, hidden, layers)
    kind = "rows" if share == "rows" and shape[1] >= parts else "threaded"
    assert ran == [f"lstm_forward_{kind}"] * layers + [f"lstm_backward_{kind}"] * layers
    _assert_numpy_path_agrees(threaded, x, hidden, layers)


@pytest.mark.parametrize("infer, batch", [(False, 6), (True, 1), (True, 3)])
def test_threaded_steps_match_pytorch(quiet_pools, monkeypatch, infer, batch):
    """In eval mode too: the inference op hands its steps to the threaded kernels, by
    units at batch 1 (fewer rows than threads), by rows at 3; at batch 1 its input
    projection runs on numba's threads as well (rows_product)."""
    x = np.random.default_rng(7).standard_normal((12, batch, 8)).astype(np.float32)
    use_threads(2)
    ran = record_shares(monkeypatch, "rows", "lstm")
    kernels = fused.compiled()
    inner = kernels.rows_product
    monkeypatch.setattr(kernels, "rows_product", lambda *a: ran.append("rows_product") or inner(*a))
    lstm, got = run_lstm(x, 20, 2, infer)
    kind = "rows" if batch >= 2 else "threaded"
    projection = ["rows_product"] if infer and batch == 1 else []
    assert ran[:2 + 2 * len(projection)] == [*projection, f"lstm_forward_{kind}"] * 2
    ref = torch.nn.LSTM(8, 20, num_layers=2)
    ref.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in lstm.state_dict().items()})
    xt = torch.from_numpy(x).requires_grad_(not infer)
    out, (h, c) = ref(xt)
    want = [out, h, c]
    if not infer:
        (out.square().sum() + (h * c).sum()).backward()
        want += [xt.grad, *(p.grad for p in ref.parameters())]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("infer", [False, True])
@pytest.mark.parametrize("on_one_thread", ["threads=1", "in a task"])
@pytest.mark.parametrize("shape, hidden, layers, serial", [
    ((9, 5, 7), 24, 1, True),
    ((6, 4, 3), 10, 2, True),  # units not a multiple of the product's four rows
    ((4, 33, 5), 6, 1, False),  # more rows than SERIAL_ROWS: BLAS and four passes a step
])
def test_the_serial_steps_agree_with_the_numpy_path_and_pytorch(
        monkeypatch, infer, on_one_thread, shape, hidden, layers, serial):
    """On one thread (lamina's, or a task of a split step's), a small batch's steps run
    in one compiled kernel a layer (numba_threaded.lstm_forward_serial, and
    lstm_backward_serial in training), in eval mode too (more rows keep the inference
    op's gate-major steps)."""
    calls = record_calls(monkeypatch, ["lstm_forward_serial", "lstm_backward_serial"])
    x = np.random.default_rng(8).standard_normal(shape).astype(np.float32)
    before = lm.get_num_threads()
    try:
        if on_one_thread == "threads=1":
            lm.set_num_threads(1)
            lstm, got = run_lstm(x, hidden, layers, infer)
        else:  # a task beside an idle one, as a split step runs its slices
            lstm, got = parallel.run_all([lambda: run_lstm(x, hidden, layers, infer),
                                          lambda: 0])[0]
    finally:
        lm.set_num_threads(before)
    want_calls = ["lstm_forward_serial"] * layers
    if not infer:
        want_calls += ["lstm_backward_serial"] * layers
    assert calls == (want_calls if serial else [])
    if not infer:
        _assert_numpy_path_agrees(got, x, hidden, layers)
    ref = torch.nn.LSTM(shape[-1], hidden, num_layers=layers)
    ref.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in lstm.state_dict().items()})
    xt = torch.from_numpy(x).requires_grad_(not infer)
    out, (h, c) = ref(xt)
    want = [out, h, c]
    if not infer:
        (out.square().sum() + (h * c).sum()).backward()
        want += [xt.grad, *(p.grad for p in ref.parameters())]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_tune_process_quiets_numbas_pool_before_it_starts():
    """In a fresh process: tune_process sets GOMP_SPINCOUNT (numba's pool not started
    yet), and with OpenBLAS's variable from the environment the threaded steps run."""
    code = ("import lamina as lm, lamina.fused as f; s = lm.runtime.tune_process(); "
            "lm.set_num_threads(2); import os; "
            "print(s['omp_threads'], os.environ['GOMP_SPINCOUNT'], f.threaded_parts())")
    env = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    env["OPENBLAS_THREAD_TIMEOUT"] = thread_pools.BLAS_THREAD_TIMEOUT
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["True", lm.runtime.omp_spin(), "2"]


@pytest.mark.parametrize("parts", [1, 2, 3])
def test_transposed_copies_any_weight(parts):
    """The backward kernels' W_hh.T, copied in shares of its columns: any shape (rows not
    a multiple of 16, fewer columns than shares), and a strided weight."""
    kernels = fused.compiled()
    rng = np.random.default_rng(parts)
    for shape in ((1024, 256), (37, 19), (5, 2)):
        w = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(kernels.transposed(w, parts), w.T)
        np.testing.assert_array_equal(kernels.transposed_serial(w), w.T)
    w = rng.standard_normal((40, 30)).astype(np.float32)[::2, ::3]
    for got in (kernels.transposed(w, parts), kernels.transposed_serial(w)):
        np.testing.assert_array_equal(got, w.T)
        assert got.flags.c_contiguous


def test_a_child_forked_after_the_pool_started_runs_the_serial_steps():
    """GNU OpenMP cannot run in a process forked after its pool started: numba ends such a
    child at its first parallel kernel. The child must fall back, and live."""
    code = """if True:
        import multiprocessing as mp, numpy as np, lamina as lm, lamina.fused as f
        lm.set_num_threads(2)
        lstm = lm.nn.LSTM(8, 16)
        x = lm.tensor(np.random.default_rng(0).random((5, 3, 8), dtype=np.float32))
        want = lstm(x)[0].detach().numpy()  # training's op: the threaded steps run
        parent = f.threaded_parts()

        def child(q):
            got = lstm(x)[0].detach().numpy()
            q.put((f.threaded_parts(), float(abs(got - want).max())))

        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=child, args=(q,))
        p.start()
        p.join(60)
        print(parent, p.exitcode, *q.get(timeout=1))
    """
    env = {**os.environ, "OPENBLAS_THREAD_TIMEOUT": thread_pools.BLAS_THREAD_TIMEOUT,
           "GOMP_SPINCOUNT": thread_pools.OMP_SPIN}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    fields = out.stdout.split()
    assert len(fields) == 4, out.stderr  # the child died: no result to print
    parent, exitcode, child_parts, error = fields
    if parent != "2":
        pytest.skip("numba's thread pool is not OpenMP here")
    assert (exitcode, child_parts) == ("0", "1"), out.stderr
    assert float(error) < 1e-5


@pytest.mark.parametrize("wide", [True, False])
@pytest.mark.parametrize("rows, n, k", [(1, 9, 5), (2, 8, 16), (5, 13, 7), (7, 4, 33),
                                        (8, 21, 64)])
def test_both_blocks_of_the_recurrent_product_are_numpys(monkeypatch, wide, rows, n, k):
    """rows_times in the block for AVX-512 (four rows of x) and the one for AVX2 (two),
    whichever this CPU compiles: rows of W, and of x, left over past the blocks, offsets
    into W and y, and the sums added to what y holds."""
    from lamina.fused import numba_rows

    monkeypatch.setattr(numba_rows, "WIDE", wide)  # read by the Python-run function
    rng = np.random.default_rng(rows * 100 + n)
    W = rng.standard_normal((n + 6, k)).astype(np.float32)
    x = rng.standard_normal((rows, k)).astype(np.float32)
    y = rng.standard_normal((rows, n + 4)).astype(np.float32)
    want = y.astype(np.float64)
    want[:, 3:3 + n] += x.astype(np.float64) @ W[2:2 + n].T.astype(np.float64)
    numba_rows.rows_times.py_func(W, 2, n, x, y, 3)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    numba_rows.set_rows_times.py_func(W, 2, n, x, y, 3)
    want[:, 3:3 + n] = x.astype(np.float64) @ W[2:2 + n].T.astype(np.float64)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
