"""`spawn`: run fn(i, *args) in nprocs new processes, as torch.multiprocessing.spawn does;
a worker's exception stops the others and is raised here with its traceback."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any, NoReturn


class ProcessException(Exception):
    def __init__(self, msg: str, error_index: int, pid: int) -> None:
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A worker raised: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A worker ended with a non-zero exit code, or by a signal, without raising."""

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self) -> Any:
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn: Callable[..., Any], i: int, args: tuple[Any, ...], errors: Any) -> None:
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent stops every worker itself
    except Exception:
        errors.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    """The workers of one spawn: `join` waits for them."""

    def __init__(self, processes: list[Any], error_queues: list[Any]) -> None:
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(p.pid) for p in self.processes]

    def join(self, timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds (None: until one ends); True once every worker
        has ended well. A worker that failed ends the others, then raises here."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            self.processes[i].join()
            if failed is None and self.processes[i].exitcode != 0:
                failed = i
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        self._raise(failed)

    def _raise(self, i: int) -> NoReturn:
        p, queue = self.processes[i], self.error_queues[i]
        if queue.empty():
            code = p.exitcode
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {i} terminated with signal {name}",
                                             i, p.pid, code, name)
            raise ProcessExitedException(f"process {i} terminated with exit code {code}",
                                         i, p.pid, code)
        message = f"\n\n-- Process {i} terminated with the following error:\n{queue.get()}"
        raise ProcessRaisedException(message, i, p.pid)


def start_processes(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
                    join: bool = True, daemon: bool = False,
                    start_method: str = "spawn") -> ProcessContext | None:
    """fn(i, *args) for i in range(nprocs), each in a new process started by
    `start_method`; waits for all when `join` (returns None), else returns their
    ProcessContext."""
    context = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        errors = context.SimpleQueue()
        p = context.Process(target=_wrap, args=(fn, i, args, errors), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(errors)
    done = ProcessContext(processes, queues)
    if not join:
        return done
    while not done.join():
        pass
    return None


def spawn(fn: Callable[..., Any], args: tuple[Any, ...] = (), nprocs: int = 1,
          join: bool = True, daemon: bool = False,
          start_method: str = "spawn") -> ProcessContext | None:
    """start_processes, by default with the spawn start method (PyTorch's signature).

    Examples:
        >>> import lamina.multiprocessing as mp
        >>> mp.spawn(print, args=("started",), nprocs=1, start_method="fork")  # doctest: +SKIP
    """
    return start_processes(fn, args, nprocs, join, daemon, start_method)
