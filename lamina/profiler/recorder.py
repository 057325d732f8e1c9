"""What a profile records: one `FunctionEvent` per op run (forward and backward) and per
`record_function` range, with its start, duration, nesting, input shapes and the bytes
its results hold. `Function.apply` and the backward engine hand each op to the active
recorder (`lamina.state.profiler`), so an op costs nothing more when none is active."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any


class FunctionEvent:
    """One recorded op or range. Times are in microseconds, as PyTorch's events give them.

    Examples:
        >>> with lm.profiler.profile() as prof:
        ...     _ = lm.ones(2, 2).exp()
        >>> event = prof.events()[0]
        >>> event.name, event.count, event.cpu_time_total >= event.self_cpu_time_total
        ('Exp', 1, True)
    """

    count = 1

    def __init__(self, name: str, start_ns: int, thread: int, parent: FunctionEvent | None,
                 input_shapes: list[list[int]], is_user_annotation: bool) -> None:
        self.name = self.key = name
        self.start_ns, self.end_ns = start_ns, start_ns
        self.thread, self.cpu_parent = thread, parent
        self.cpu_children: list[FunctionEvent] = []
        self.input_shapes = input_shapes
        self.is_user_annotation = is_user_annotation
        self.cpu_memory_usage = 0

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1e3

    cpu_time = cpu_time_total  # one call: its mean time is its time

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def time_range(self) -> tuple[float, float]:
        return self.start_ns / 1e3, self.end_ns / 1e3

    def __repr__(self) -> str:
        return (f"<FunctionEvent name={self.name} cpu_time_total={self.cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


def _nbytes(result: Any) -> int:
    items = result if isinstance(result, tuple) else (result,)
    return sum(int(getattr(a, "nbytes", 0)) for a in items if a is not None)


class Recorder:
    """Collects events while a profile is recording; each thread nests its own."""

    def __init__(self, record_shapes: bool, profile_memory: bool) -> None:
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.events: list[FunctionEvent] = []
        self._open = threading.local()

    def _stack(self) -> list[FunctionEvent]:
        stack = getattr(self._open, "stack", None)
        if stack is None:
            stack = self._open.stack = []
        return stack

    def open(self, name: str, arrays: Sequence[Any] = (), user: bool = False) -> FunctionEvent:
        stack = self._stack()
        shapes = ([list(getattr(a, "shape", ())) for a in arrays] if self.record_shapes
                  else [])
        event = FunctionEvent(name, time.perf_counter_ns(), threading.get_ident(),
                              stack[-1] if stack else None, shapes, user)
        stack.append(event)
        return event

    def close(self, event: FunctionEvent, result: Any = None) -> None:
        event.end_ns = time.perf_counter_ns()
        stack = self._stack()
        if event in stack:  # a range closed out of order closes what it holds too
            del stack[stack.index(event):]
        if self.profile_memory and result is not None:
            event.cpu_memory_usage = _nbytes(result)
        if event.cpu_parent is not None:
            event.cpu_parent.cpu_children.append(event)
            if self.profile_memory:
                event.cpu_parent.cpu_memory_usage += event.cpu_memory_usage
        self.events.append(event)

    def run(self, name: str, body: Callable[..., Any], arrays: Sequence[Any]) -> Any:
        """body(*arrays), timed as an event named `name` (the hook the core calls)."""
        event = self.open(name, arrays)
        result = None
        try:
            result = body(*arrays)
            return result
        finally:
            self.close(event, result)
