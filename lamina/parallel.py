"""lamina's own threads: how many there are, and running pieces of work on them at once.

NumPy runs each elementwise kernel on one core, and releases the GIL inside it. Work that
splits into independent pieces (an optimizer updating slices of its parameters) runs one
piece per thread, so a memory-bound update uses every core's bandwidth instead of one's.

    >>> import lamina as lm
    >>> lm.set_num_threads(2)
    >>> lm.get_num_threads()
    2
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

_threads: int | None = None
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_pool_lock = threading.Lock()
# The process the pool's threads run in. A child forked from it (Hogwild workers,
# DataLoader workers) has the pool object but none of its threads, and perhaps the lock
# held: it starts its own.
_pool_pid = os.getpid()
_local = threading.local()  # in_task: this thread is running one of run_all's tasks
# Elements a piece must have. A handoff to the pool and back costs about 0.1 ms on a
# virtual machine (a sleeping thread's wake-up), which a piece must save: a memory-bound
# pass over 2**18 float32 elements takes about that (benchmarks/RESULTS.md).
MIN_PIECE = 1 << 18


def default_threads() -> int:
    """OMP_NUM_THREADS where set (PyTorch reads it too), else the CPUs this process may
    run on (its affinity mask where the OS has one)."""
    pinned = os.environ.get("OMP_NUM_THREADS", "")
    if pinned.isdigit() and int(pinned) > 0:
        return int(pinned)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def get_num_threads() -> int:
    """How many threads lamina's own parallel work uses (BLAS keeps its own setting).

    Examples:
        >>> lm.get_num_threads() >= 1
        True
    """
    return _threads if _threads is not None else default_threads()


def set_num_threads(threads: int) -> None:
    """Use `threads` threads for lamina's own parallel work; 1 runs everything in the caller.

    Examples:
        >>> n = lm.get_num_threads(); lm.set_num_threads(1); lm.get_num_threads()
        1
        >>> lm.set_num_threads(n)
    """
    global _threads
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"set_num_threads: threads must be an int >= 1, got {threads!r}")
    _threads = threads


def bounds(n: int, parts: int) -> list[tuple[int, int]]:
    """Contiguous (start, stop) ranges covering n items, as equal as they can be, at most
    `parts` of them (fewer when n is smaller)."""
    parts = min(parts, n)
    edges = [n * k // parts for k in range(parts + 1)]
    return list(zip(edges[:-1], edges[1:]))


def ranges(sizes: Sequence[int], threads: int) -> list[list[tuple[int, int, int]]]:
    """For each thread, its (array index, start, stop) pieces: arrays of these sizes laid
    end to end and cut into `threads` ranges as equal as they can be (an elementwise pass
    over many arrays, in one handoff to the pool however many arrays there are)."""
    shares = bounds(sum(sizes), threads)
    out: list[list[tuple[int, int, int]]] = [[] for _ in shares]
    offset = 0
    for i, size in enumerate(sizes):
        for t, (start, stop) in enumerate(shares):
            lo, hi = max(start, offset), min(stop, offset + size)
            if lo < hi:
                out[t].append((i, lo - offset, hi - offset))
        offset += size
    return out


def run_all(tasks: Sequence[Callable[[], Any]]) -> list[Any]:
    """Run the tasks at once, the first on the calling thread and the rest on the pool, and
    return their results in order. Every task finishes before an error re-raises.

    Called from inside a task (an op's pieces inside a split plan's slice), it runs the
    tasks here, one after another: the pool's threads may all be busy with the tasks
    waiting on this very call, and the cores are busy too."""
    global _pool, _pool_size, _pool_lock, _pool_pid
    if len(tasks) <= 1 or in_task():
        return [task() for task in tasks]
    if _pool_pid != os.getpid():
        _pool, _pool_size, _pool_lock, _pool_pid = None, 0, threading.Lock(), os.getpid()
    with _pool_lock:  # callers on several threads share one pool
        if _pool is None or _pool_size < len(tasks) - 1:
            old, _pool_size = _pool, max(len(tasks), get_num_threads()) - 1
            _pool = ThreadPoolExecutor(_pool_size, thread_name_prefix="lamina")
            if old is not None:
                old.shutdown(wait=False)  # its queued tasks still run
        futures = [_pool.submit(_as_task, task) for task in tasks[1:]]
    try:
        first = _as_task(tasks[0])
    finally:
        wait(futures)
    return [first, *(f.result() for f in futures)]


def in_task() -> bool:
    """Whether this thread is running one of run_all's tasks: its work is one share of a
    split already, which must not split itself over the cores again."""
    return getattr(_local, "in_task", False)


def _as_task(task: Callable[[], Any]) -> Any:
    _local.in_task = True
    try:
        return task()
    finally:
        _local.in_task = False


def pieces(n: int, work: Callable[[int, int], Any], unit: int = 1) -> None:
    """Call work(lo, hi) over contiguous ranges covering [0, n), one per thread and at once
    (NumPy, SciPy and lamina's fused kernels release the GIL inside a kernel); once over
    everything when the n items of `unit` elements each are too few for a second piece to
    pay for the handoff."""
    if n * unit < 2 * MIN_PIECE:  # one piece: no thread count to look up, no task list
        work(0, n)
        return
    parts = max(1, min(get_num_threads(), n, n * unit // MIN_PIECE))
    run_all([lambda lo=lo, hi=hi: work(lo, hi) for lo, hi in bounds(n, parts)])
