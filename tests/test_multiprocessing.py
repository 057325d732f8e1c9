"""lamina.multiprocessing and shared memory against torch.multiprocessing: a model shared
before its workers start is trained by them (Hogwild), by fork and by spawn; tensors sent
through a queue or to spawn's workers share their memory; a worker's failure reaches the
parent. Real processes, no mocks."""

from __future__ import annotations

import os

import mp_workers
import numpy as np
import pytest

import lamina as lm
import lamina.multiprocessing as lmp
import lamina.nn as nn
from lamina import shared_memory

torch = pytest.importorskip("torch")
import torch.multiprocessing as tmp  # noqa: E402

LIBS = {"lamina": (lm, lmp, nn), "torch": (torch, tmp, torch.nn)}
METHODS = [m for m in ("fork", "spawn") if m in lmp.get_all_start_methods()]


def _model(fw: str):
    t, _, tnn = LIBS[fw]
    model = tnn.Linear(4, 3)
    rng = np.random.default_rng(0)
    with t.no_grad():
        model.weight.copy_(t.tensor(rng.standard_normal((3, 4)).astype(np.float32)))
        model.bias.copy_(t.tensor(rng.standard_normal(3).astype(np.float32)))
    return model


def _weights(model) -> list[np.ndarray]:
    return [p.detach().numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("method", METHODS)
def test_hogwild_worker_trains_the_parents_model_as_pytorchs_does(method):
    after = {}
    for fw, (_, mp, _) in LIBS.items():
        model = _model(fw)
        assert model.share_memory() is model
        assert all(p.is_shared() for p in model.parameters())
        worker = mp.get_context(method).Process(target=mp_workers.sgd_steps, args=(model, fw))
        worker.start()
        worker.join()
        assert worker.exitcode == 0
        after[fw] = _weights(model)
    here = _model("lamina")
    mp_workers.sgd_steps(here, "lamina")  # the same steps in this process
    for a, b, c in zip(after["lamina"], after["torch"], _weights(here)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        # The same steps to float32 rounding, not to the bit: SGD picks its update once a
        # process (lamina/optim/sgd.py), and a spawned worker, which has loaded no numba,
        # may take the BLAS's axpby (one rounding, fused) where this process, which has,
        # takes NumPy's passes.
        np.testing.assert_allclose(a, c, rtol=1e-6, atol=1e-7)
    assert not np.allclose(after["lamina"][0], _weights(_model("lamina"))[0])


def test_without_share_memory_a_forked_worker_trains_its_own_copy():
    if "fork" not in METHODS:
        pytest.skip("no fork start method here")
    for fw, (_, mp, _) in LIBS.items():
        model = _model(fw)
        before = _weights(model)
        worker = mp.get_context("fork").Process(target=mp_workers.sgd_steps, args=(model, fw))
        worker.start()
        worker.join()
        for a, b in zip(_weights(model), before):
            np.testing.assert_array_equal(a, b)


def test_spawn_workers_write_a_shared_tensor():
    got = {}
    for fw, (t, mp, _) in LIBS.items():
        shared = t.zeros(3, 2).share_memory_()
        assert mp.spawn(mp_workers.fill_row, args=(shared, fw), nprocs=3) is None
        got[fw] = shared.numpy().copy()
    np.testing.assert_array_equal(got["lamina"], got["torch"])
    np.testing.assert_array_equal(got["lamina"], [[1, 1], [2, 2], [3, 3]])


@pytest.mark.parametrize("method", METHODS)
def test_a_shared_tensor_sent_through_a_queue_is_the_same_memory(method):
    for fw, (t, mp, _) in LIBS.items():
        context = mp.get_context(method)
        queue, done = context.Queue(), context.Queue()
        worker = context.Process(target=mp_workers.add_through_queue, args=(queue, done, fw))
        worker.start()
        x = t.arange(4.0).share_memory_()
        view = x[1:3]  # a view of the shared block travels as such
        queue.put(view)
        assert done.get(timeout=60) is True
        worker.join()
        np.testing.assert_array_equal(x.numpy(), [0, 11, 12, 3]), fw


def test_a_worker_that_raises_stops_spawn_with_its_traceback():
    for mp in (lmp, tmp):
        with pytest.raises(mp.ProcessRaisedException, match="worker 1 fails on purpose") as e:
            mp.spawn(mp_workers.fail, nprocs=2)
        assert e.value.error_index == 1


def test_share_memory_keeps_values_dtype_and_grad_and_is_idempotent():
    x = lm.arange(6.0, dtype=lm.float64).reshape(2, 3).T.requires_grad_()
    values = x.detach().numpy().copy()
    assert not x.is_shared() and x.share_memory_() is x
    assert x.is_shared() and x.requires_grad and x.dtype == lm.float64
    np.testing.assert_array_equal(x.detach().numpy(), values)
    block = x.array
    assert x.share_memory_().array is block  # already shared: nothing moves
    assert x[0].is_shared()  # a view of shared memory is in it
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * values)
    assert lm.zeros(0).share_memory_().is_shared()  # an empty tensor too


def test_module_share_memory_moves_buffers_and_existing_grads():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    model(lm.randn(4, 3)).sum().backward()
    model.share_memory()
    assert all(p.is_shared() and p.grad.is_shared() for p in model.parameters())
    assert all(b.is_shared() for b in model.buffers())


def test_a_non_leaf_tensor_that_requires_grad_is_refused_as_pytorch_refuses():
    y = lm.ones(2, requires_grad=True) * 2
    for mp in (lmp, tmp):
        queue = mp.get_context("spawn").SimpleQueue()
        with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf"):
            queue.put(y if mp is lmp else torch.ones(2, requires_grad=True) * 2)


def test_shared_blocks_are_freed_with_their_last_array():
    a = shared_memory.share(np.ones(1000))
    fd = shared_memory.describe(a)[0]
    os.fstat(fd)  # open while the array lives
    del a
    with pytest.raises(OSError):
        os.fstat(fd)


def test_sharing_strategies_are_pytorchs_names():
    assert lmp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert lmp.get_sharing_strategy() == tmp.get_sharing_strategy()
    lmp.set_sharing_strategy("file_system")
    lmp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="expected one of"):
        lmp.set_sharing_strategy("shm")


def test_a_forked_worker_runs_tasks_on_lamina_s_thread_pool():
    """The pool the parent started has no threads in a forked child: the child starts its
    own (it used to wait forever on tasks queued to the parent's)."""
    if "fork" not in METHODS:
        pytest.skip("no fork start method here")
    from lamina import parallel

    threads = parallel.get_num_threads()
    parallel.set_num_threads(2)
    try:
        assert parallel.run_all([lambda: 1, lambda: 2]) == [1, 2]  # the parent's pool
        context = lmp.get_context("fork")
        queue = context.Queue()
        worker = context.Process(target=mp_workers.pool_sum, args=(queue,))
        worker.start()
        try:
            assert queue.get(timeout=60) == 7
        finally:
            worker.terminate()
            worker.join()
    finally:
        parallel.set_num_threads(threads)


@pytest.mark.parametrize("method", METHODS)
def test_a3c_worker_steps_the_shared_model_and_the_shared_adam_moments(method):
    model = _model("lamina").share_memory()
    optimizer = mp_workers.SharedAdam(model.parameters(), lr=0.01)
    worker = lmp.get_context(method).Process(target=mp_workers.adam_steps,
                                             args=(model, optimizer))
    worker.start()
    worker.join()
    assert worker.exitcode == 0
    here = _model("lamina")
    mine = mp_workers.SharedAdam(here.parameters(), lr=0.01)
    mp_workers.adam_steps(here, mine)  # the same steps in this process
    for a, b in zip(model.parameters(), here.parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        for key in ("step", "exp_avg", "exp_avg_sq"):
            np.testing.assert_array_equal(optimizer.state[a][key].numpy(),
                                          mine.state[b][key].numpy())
    assert optimizer.state[model.weight]["step"].item() == 2
