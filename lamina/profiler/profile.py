"""`profile`, `record_function`, `schedule` and `tensorboard_trace_handler`, PyTorch's
profiler API over lamina's ops: each forward and backward op is an event named after the
op ("Linear", "AddmmBackward0"), timed on the CPU, which is where lamina computes."""

from __future__ import annotations

import enum
import gzip
import json
import os
import socket
import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from lamina import state
from lamina.profiler.recorder import Recorder
from lamina.profiler.tables import EventList, events_list


class ProfilerActivity(enum.Enum):
    """What to profile. lamina computes on the CPU: CUDA and the others record nothing.

    Examples:
        >>> lm.profiler.ProfilerActivity.CPU in lm.profiler.supported_activities()
        True
    """

    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities() -> set[ProfilerActivity]:
    """The activities lamina records: the CPU's.

    Examples:
        >>> lm.profiler.supported_activities()
        {<ProfilerActivity.CPU: 0>}
    """
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What a `schedule` says to do at a step.

    Examples:
        >>> lm.profiler.schedule(wait=1, warmup=1, active=1)(1)
        <ProfilerAction.WARMUP: 1>
    """

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """PyTorch's step schedule: skip `skip_first` steps, then cycles of `wait` idle,
    `warmup` and `active` recorded steps (the last one saves: `on_trace_ready` runs),
    `repeat` times (0: for ever).

    Examples:
        >>> plan = lm.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
        >>> [plan(step).name for step in range(5)]
        ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("schedule: wait, warmup, repeat and skip_first must be >= 0 and "
                         f"active > 0; got {wait=}, {warmup=}, {active=}, {repeat=}, "
                         f"{skip_first=}")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      UserWarning, stacklevel=2)

    def action(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:  # the first cycle starts without its wait; the others keep it
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return action


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)


class profile:  # noqa: N801 - PyTorch's name
    """Record the ops run inside the block (or between `start()` and `stop()`);
    `key_averages().table()` summarises them, `export_chrome_trace` writes a trace that
    chrome://tracing and Perfetto open. With a `schedule`, call `step()` after each
    training step; `on_trace_ready(prof)` runs at the end of each active span.

    Examples:
        >>> model = nn.Linear(4, 2)
        >>> with lm.profiler.profile(record_shapes=True) as prof:
        ...     with lm.profiler.record_function("forward"):
        ...         loss = model(lm.ones(3, 4)).sum()
        ...     loss.backward()
        >>> [row.key for row in prof.key_averages()]
        ['forward', 'Linear', 'Sum', 'SumBackward0', 'AddmmBackward0']
    """

    def __init__(self, *, activities: Iterable[Any] | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, acc_events: bool = False,
                 **kwargs: Any) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.step_num = 0
        self.acc_events = acc_events  # keep the events of every span, not the last one's
        self._kept: list[Any] = []
        self._recorder: Recorder | None = None
        self._finished: Recorder | None = None
        self._action = ProfilerAction.NONE
        self._step_event: Any = None
        self._origin_ns = time.perf_counter_ns()

    # -- recording --------------------------------------------------------------------
    def start(self) -> None:
        self.step_num = 0
        self._origin_ns = time.perf_counter_ns()
        self._enter(self.schedule(0) if self.schedule else ProfilerAction.RECORD)

    def stop(self) -> None:
        if self._action in _RECORDING:
            self._save()
        self._enter(ProfilerAction.NONE)

    def step(self) -> None:
        """End one training step: with a schedule, move to the next step's action."""
        if self.schedule is None:
            return
        self.step_num += 1  # on_trace_ready sees the number of the step to come, as PyTorch's
        if self._action is ProfilerAction.RECORD_AND_SAVE:
            self._save()
        self._enter(self.schedule(self.step_num))

    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _enter(self, action: ProfilerAction) -> None:
        recording = action in _RECORDING and ProfilerActivity.CPU in self.activities
        if self._recorder is not None and self._step_event is not None:
            self._recorder.close(self._step_event)
            self._step_event = None
        if recording and self._recorder is None:
            self._recorder = Recorder(self.record_shapes, self.profile_memory)
        if not recording:
            self._recorder = None
        state.profiler = self._recorder
        if recording and self.schedule is not None:
            self._step_event = self._recorder.open("ProfilerStep*", user=True)
        self._action = action

    def _save(self) -> None:
        if self._recorder is not None and self._step_event is not None:
            self._recorder.close(self._step_event)
            self._step_event = None
        self._finished, self._recorder = self._recorder, None
        if self.acc_events and self._finished is not None:
            self._kept += self._finished.events
        state.profiler = None
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- results ----------------------------------------------------------------------
    def events(self) -> EventList:
        """The recorded events of the last finished span (of every span with
        `acc_events=True`), in the order they started."""
        done = self._finished or self._recorder
        events = self._kept if self.acc_events else done.events if done else []
        return events_list(events, self.profile_memory)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     **kwargs: Any) -> EventList:
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str | os.PathLike) -> str:
        """Write the events as Chrome trace JSON (gzipped if `path` ends in .gz)."""
        pid = os.getpid()
        trace = [{"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                  "name": e.name, "pid": pid, "tid": e.thread,
                  "ts": (e.start_ns - self._origin_ns) / 1e3, "dur": e.cpu_time_total,
                  "args": {"Input Dims": e.input_shapes} if e.input_shapes else {}}
                 for e in self.events()]
        text = json.dumps({"traceEvents": trace, "displayTimeUnit": "ms"})
        path = os.fspath(path)
        with (gzip.open(path, "wt") if path.endswith(".gz") else open(path, "w")) as f:
            f.write(text)
        return path


class record_function:  # noqa: N801 - PyTorch's name
    """Label a range of code in the profile (a context manager or a decorator); nothing
    is recorded when no profile is active.

    Examples:
        >>> with lm.profiler.profile() as prof:
        ...     with lm.profiler.record_function("my_block"):
        ...         _ = lm.ones(2).exp()
        >>> [(e.name, e.cpu_parent.name if e.cpu_parent else None) for e in prof.events()]
        [('my_block', None), ('Exp', 'my_block')]
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name, self.args = name, args
        self._event: Any = None
        self._recorder: Recorder | None = None

    def __enter__(self) -> record_function:
        self._recorder = state.profiler
        if self._recorder is not None:
            self._event = self._recorder.open(self.name, user=True)
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._recorder is not None and self._event is not None:
            self._recorder.close(self._event)
        self._event = self._recorder = None

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        import functools

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped


def tensorboard_trace_handler(dir_name: str | os.PathLike, worker_name: str | None = None,
                              use_gzip: bool = False) -> Callable[[profile], None]:
    """An `on_trace_ready` that writes each trace into `dir_name` as
    `<worker>.<time>.pt.trace.json`, the files TensorBoard's profiler plugin reads.

    Examples:
        >>> import os, tempfile
        >>> folder = tempfile.mkdtemp()
        >>> handler = lm.profiler.tensorboard_trace_handler(folder, worker_name="w0")
        >>> with lm.profiler.profile(on_trace_ready=handler):
        ...     _ = lm.ones(2).exp()
        >>> [name.startswith("w0.") and name.endswith(".pt.trace.json")
        ...  for name in os.listdir(folder)]
        [True]
    """
    worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"
        prof.export_chrome_trace(os.path.join(dir_name, name + (".gz" if use_gzip else "")))

    return handler
