"""Elementwise optimizers updating in pieces over threads: the same bits as one thread."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import lamina as lm
import lamina.optim as optim
from lamina import parallel, thread_pools
from lamina.optim import pieces

# Big enough to be cut (pieces.MIN_PIECE elements per thread), and one parameter small
# enough to land whole inside a thread's range.
SHAPES = [(600, 800), (400,), (500, 600), (7,)]

RULES = [
    (optim.SGD, {"lr": 0.1}),
    (optim.SGD, {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "weight_decay": 0.01}),
    (optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    (optim.Adam, {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    (optim.AdamW, {"lr": 0.01}),
    (optim.RMSprop, {"lr": 0.01, "centered": True, "momentum": 0.5}),
    (optim.Adagrad, {"lr": 0.1, "lr_decay": 0.01}),
]


@pytest.fixture
def threads():
    """Set lamina's thread count for one test and put the default back after."""
    before, parallel._threads = parallel._threads, None
    yield lm.set_num_threads
    parallel._threads = before


def _run(opt_cls, kw, n_threads: int, steps: int = 4):
    lm.set_num_threads(n_threads)
    rng = np.random.default_rng(0)
    params = [lm.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
              for s in SHAPES]
    opt = opt_cls(params, **kw)
    for _ in range(steps):
        for p in params:
            p.grad = rng.standard_normal(p.shape).astype(np.float32)
        opt.step()
    return [p.array for p in params], opt


@pytest.mark.parametrize("opt_cls, kw", RULES)
def test_pieces_over_threads_give_one_threads_bits(threads, opt_cls, kw) -> None:
    want, one = _run(opt_cls, kw, 1)
    got, two = _run(opt_cls, kw, 2)
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g, w)
    for p_one, p_two in zip(one.state.values(), two.state.values()):
        assert p_one.keys() == p_two.keys()
        for k in p_one:
            np.testing.assert_array_equal(p_two[k], p_one[k])  # step counts counted once


def _recording_sgd():
    """An SGD class that records (thread, elements) of every update_param call."""
    seen: list[tuple[int, int]] = []

    class Recorded(optim.SGD):
        def update_param(self, param, grad, state, group):
            seen.append((threading.get_ident(), param.size))
            super().update_param(param, grad, state, group)

    return Recorded, seen


def test_each_thread_updates_its_own_range(threads) -> None:
    recorded, seen = _recording_sgd()
    _run(recorded, {"lr": 0.1, "momentum": 0.9}, 2, steps=3)
    total = sum(int(np.prod(s)) for s in SHAPES)
    first = seen[:len(SHAPES)]  # the first step makes momentum buffers, whole
    assert sorted(size for _, size in first) == sorted(int(np.prod(s)) for s in SHAPES)
    last = seen[-5:]  # two ranges cut the first and third parameters: five pieces
    assert len({ident for ident, _ in last}) == 2
    assert sum(size for _, size in last) == total
    by_thread: dict[int, int] = {}
    for ident, size in last:
        by_thread[ident] = by_thread.get(ident, 0) + size
    assert sorted(by_thread.values()) == [total // 2, total - total // 2]


def test_ranges_cover_every_element_once_in_equal_shares() -> None:
    sizes = [10, 3, 0, 7, 1]
    plan = parallel.ranges(sizes, 3)
    covered = [np.zeros(s, int) for s in sizes]
    for share in plan:
        for i, lo, hi in share:
            covered[i][lo:hi] += 1
    assert all((c == 1).all() for c in covered)
    assert [sum(hi - lo for _, lo, hi in share) for share in plan] == [7, 7, 7]


def test_small_or_strided_updates_run_whole(threads) -> None:
    threads(2)
    recorded, seen = _recording_sgd()
    small = lm.tensor(np.ones(100, np.float32), requires_grad=True)
    big = lm.tensor(np.ones((800, 800), np.float32), requires_grad=True)
    opt = recorded([small, big], lr=0.5)
    small.grad = np.ones(100, np.float32)
    big.grad = np.ones((800, 800), np.float32).T  # a transposed view: not flat-sliceable
    opt.step()
    assert sorted(size for _, size in seen) == [100, 640000]
    np.testing.assert_array_equal(big.array, 0.5)


class _Rebinds(optim.Optimizer):
    elementwise = True

    def __init__(self, params):
        super().__init__(params, {"lr": 0.1})

    def init_state(self, param, group):
        return {"acc": np.zeros_like(param)}

    def update_param(self, param, grad, state, group):
        state["acc"] = state["acc"] + grad  # a new array: pieces would lose it
        param -= group["lr"] * state["acc"]


class _AddsKeys(_Rebinds):
    def update_param(self, param, grad, state, group):
        state["acc"] += grad
        state.setdefault("late", 0)
        param -= group["lr"] * state["acc"]


@pytest.mark.parametrize("cls, message", [(_Rebinds, "replaced state\\['acc'\\]"),
                                          (_AddsKeys, "added state keys")])
def test_a_rule_that_is_not_elementwise_in_place_is_named(threads, cls, message) -> None:
    threads(2)
    n = 3 * pieces.MIN_PIECE  # enough for two pieces
    p = lm.tensor(np.zeros(n, np.float32), requires_grad=True)
    opt = cls([p])
    p.grad = np.ones(n, np.float32)
    with pytest.raises(RuntimeError, match=f"{cls.__name__}: update_param {message}"):
        opt.step()


def test_thread_count_is_checked_and_kept(threads) -> None:
    assert lm.get_num_threads() == parallel.default_threads() >= 1
    threads(3)
    assert lm.get_num_threads() == 3
    for bad in (0, -1, 2.0, True, "2"):
        with pytest.raises(ValueError, match="threads must be an int >= 1"):
            lm.set_num_threads(bad)


def test_run_all_returns_in_order_and_waits_before_raising() -> None:
    done = threading.Event()

    def slow() -> int:
        done.wait(5)
        return 2

    def fails() -> int:
        done.set()
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        parallel.run_all([fails, slow])
    assert parallel.run_all([lambda: 1, lambda: 2, lambda: 3]) == [1, 2, 3]
    assert parallel.run_all([lambda: 4]) == [4]


def test_default_threads_follow_omp_num_threads(monkeypatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert parallel.default_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    assert parallel.default_threads() >= 1


@pytest.mark.parametrize("command, env, want", [
    (["-c", "import numpy, lamina"], {}, "unset"),  # a plain import changes nothing
    (["-c", "import lamina; lamina.runtime.tune_process()"], {}, "unset"),  # too late
    (["-m", "lamina.cli", "env"], {}, "unset"),  # main alone cannot: NumPy is loaded
    (["-c", "from lamina.cli import entry; entry()", "env"], {}, thread_pools.BLAS_THREAD_TIMEOUT),
    (["-c", "from lamina.cli import entry; entry()", "env"],
     {"OPENBLAS_THREAD_TIMEOUT": "24"}, "24"),  # the user's value wins
    (["-c", "from lamina.cli import entry; entry()", "env"], {"LAMINA_TUNE_PROCESS": "0"},
     "unset"),
])
def test_the_lamina_command_quiets_idle_blas_threads_before_numpy_loads(command, env,
                                                                         want) -> None:
    """The `lamina` entry point starts itself again with the variable set, since OpenBLAS
    reads it only when NumPy loads; `lamina env` reports what the process runs with."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("OPENBLAS_THREAD_TIMEOUT", "LAMINA_TUNE_PROCESS")}
    code = "; import os; print('OPENBLAS_THREAD_TIMEOUT: ' + os.environ.get(" \
           "'OPENBLAS_THREAD_TIMEOUT', 'unset'))"
    if command[0] == "-c" and "entry" not in command[1]:
        command = ["-c", command[1] + code]
    out = subprocess.run([sys.executable, *command], env={**base, **env}, capture_output=True,
                         text=True, check=True).stdout
    assert f"OPENBLAS_THREAD_TIMEOUT: {want}" in out


def test_run_all_runs_every_task_at_once_and_serves_several_callers() -> None:
    tasks = parallel.get_num_threads() + 2  # more than the pool has: it grows
    barrier = threading.Barrier(tasks, timeout=10)  # breaks unless all wait at once
    assert parallel.run_all([lambda i=i: barrier.wait() >= 0 and i
                             for i in range(tasks)]) == list(range(tasks))
    results: list[list[int]] = []

    def call(k: int) -> None:
        results.append(parallel.run_all([lambda i=i: k * 10 + i for i in range(3)]))

    callers = [threading.Thread(target=call, args=(k,)) for k in range(4)]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    assert sorted(results) == [[k * 10 + i for i in range(3)] for k in range(4)]


def test_pieces_keep_each_groups_hyper_parameters(threads) -> None:
    def run(n_threads):
        threads(n_threads)
        rng = np.random.default_rng(1)
        a, b = (lm.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=True)
                for s in [(300, 300), (200, 400)])
        opt = optim.SGD([{"params": [a], "lr": 0.5}, {"params": [b], "momentum": 0.9}],
                        lr=0.01)
        for _ in range(3):
            a.grad, b.grad = (rng.standard_normal(p.shape).astype(np.float32) for p in (a, b))
            opt.step()
        return a.array, b.array

    for got, want in zip(run(2), run(1)):
        np.testing.assert_array_equal(got, want)


def test_run_all_inside_a_task_runs_inline_instead_of_waiting_on_the_pool(threads) -> None:
    """A split plan's slice runs as a pool task; an op inside it that asks for pieces must
    not queue them behind the very task that waits for them (which hung before)."""
    threads(2)
    seen: list[tuple[str, list[int]]] = []

    def outer(k: int) -> int:
        me = threading.current_thread().name
        inner = parallel.run_all([lambda i=i: (threading.current_thread().name, i)
                                  for i in range(3)])
        seen.append((me, [i for _, i in inner]))
        assert {name for name, _ in inner} == {me}  # all on the task's own thread
        return k

    done: list[list[int]] = []
    caller = threading.Thread(target=lambda: done.append(parallel.run_all(
        [lambda k=k: outer(k) for k in range(2)])), daemon=True)
    caller.start()
    caller.join(timeout=10)
    assert done == [[0, 1]], "run_all inside a run_all task hung"
    assert sorted(order for _, order in seen) == [[0, 1, 2], [0, 1, 2]]


def test_pieces_cover_every_index_once_in_as_many_ranges_as_threads_pay_for(threads) -> None:
    threads(2)
    calls: list[tuple[int, int]] = []

    def record(lo: int, hi: int) -> None:
        calls.append((lo, hi))

    n = 3 * parallel.MIN_PIECE
    parallel.pieces(n, record)
    assert sorted(calls) == [(0, n // 2), (n // 2, n)]
    calls.clear()
    parallel.pieces(parallel.MIN_PIECE + 5, record)  # too small for two pieces
    assert calls == [(0, parallel.MIN_PIECE + 5)]
