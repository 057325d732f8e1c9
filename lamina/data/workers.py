"""DataLoader worker processes: each loads the batches it is sent (index lists in, batches
out, in the loader's order), seeded per worker; an exception in a worker reaches the main
process with the worker's traceback.

Batches come back through multiprocessing queues (pickled by Python, between processes
this loader started itself: nothing read from a file is unpickled).
"""

from __future__ import annotations

import builtins
import dataclasses
import multiprocessing as mp
import queue
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

_INFO: WorkerInfo | None = None
_POLL_S = 5.0  # how often a waiting loader checks that its workers are alive


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What `get_worker_info()` tells code running in a worker (PyTorch's fields)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


def get_worker_info() -> WorkerInfo | None:
    """This worker's id, the number of workers, its seed and its copy of the dataset;
    None in the main process. An IterableDataset uses it to split its stream.

    Examples:
        >>> get_worker_info() is None  # here, in the main process
        True
    """
    return _INFO


@dataclasses.dataclass
class _Failure:
    """An exception raised in a worker, sent back as text."""

    worker: int
    kind: str
    text: str

    def reraise(self) -> None:
        kind = getattr(builtins, self.kind, None)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = RuntimeError
        raise kind(f"Caught {self.kind} in DataLoader worker process {self.worker}.\n"
                   f"Original {self.text}")


def _work(worker: int, workers: int, seed: int, dataset: Any, fetch: Callable[[Any], Any],
          init_fn: Callable[[int], None] | None, tasks: Any, results: Any) -> None:
    """A worker's loop: (position, indices) in, (position, batch or failure) out; None
    stops it. For an iterable dataset, `indices` is None and the batch is the next one."""
    global _INFO
    from lamina.random import manual_seed

    _INFO = WorkerInfo(worker, workers, seed, dataset)
    manual_seed(seed % 2**63)
    np.random.seed(seed % 2**32)
    stream: Iterator[Any] | None = None
    try:
        if init_fn is not None:
            init_fn(worker)
    except Exception as e:  # the first task reports it
        failed: _Failure | None = _Failure(worker, type(e).__name__, traceback.format_exc())
    else:
        failed = None
    while True:
        task = tasks.get()
        if task is None:
            return
        position, indices = task
        if failed is not None:
            results.put((position, failed))
            continue
        try:
            if indices is None:
                stream = stream if stream is not None else fetch(None)
                results.put((position, next(stream, StopIteration)))
            else:
                results.put((position, fetch(indices)))
        except Exception as e:
            results.put((position, _Failure(worker, type(e).__name__, traceback.format_exc())))


class WorkerPool:
    """`count` worker processes over one dataset; `run(tasks)` yields their batches in
    order. Kept between epochs when the loader's workers are persistent."""

    def __init__(self, count: int, dataset: Any, fetch: Callable[[Any], Any],
                 init_fn: Callable[[int], None] | None, seed: int, context: Any,
                 timeout: float) -> None:
        ctx = mp.get_context(context) if isinstance(context, str) or context is None else context
        self.results = ctx.Queue()
        self.tasks = [ctx.Queue() for _ in range(count)]
        self.timeout = timeout
        self.procs = [ctx.Process(target=_work, args=(w, count, seed + w, dataset, fetch,
                                                      init_fn, self.tasks[w], self.results),
                                  daemon=True) for w in range(count)]
        for p in self.procs:
            p.start()

    def run(self, indices: Iterator[Any], prefetch: int) -> Iterator[Any]:
        """The batch of each entry of `indices`, in order (None entries: the workers'
        streams, round robin, until every worker's stream ends)."""
        count, sent, done, waiting = len(self.procs), 0, 0, {}
        streams_left = set(range(count))
        source = iter(indices)
        exhausted = False
        while True:
            while not exhausted and sent - done < prefetch * count:
                task = next(source, StopIteration)
                if task is StopIteration:
                    exhausted = True
                    break
                self._send(sent, task, streams_left)
                sent += 1
            if done == sent:
                return
            while done not in waiting:
                position, item = self._receive()
                waiting[position] = item
            item = waiting.pop(done)
            done += 1
            if isinstance(item, _Failure):
                item.reraise()
            if item is StopIteration:  # one worker's stream has ended
                streams_left.discard((done - 1) % count)
                if not streams_left:
                    exhausted = True
                continue
            yield item

    def _send(self, position: int, task: Any, streams_left: set[int]) -> None:
        worker = position % len(self.procs)
        if task is None and worker not in streams_left:
            self.results.put((position, StopIteration))  # nothing more from that one
            return
        self.tasks[worker].put((position, task))

    def _receive(self) -> tuple[int, Any]:
        waited = 0.0
        while True:
            try:
                return self.results.get(timeout=_POLL_S)
            except queue.Empty:
                waited += _POLL_S
                dead = [p for p in self.procs if not p.is_alive()]
                if dead:
                    raise RuntimeError(f"DataLoader worker (pid {dead[0].pid}) exited "
                                       f"unexpectedly with exit code {dead[0].exitcode}") from None
                if self.timeout and waited >= self.timeout:
                    raise RuntimeError(f"DataLoader timed out after {self.timeout} seconds "
                                       "waiting for a batch") from None

    def close(self) -> None:
        for q in self.tasks:
            q.put(None)
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
