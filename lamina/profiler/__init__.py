"""`lamina.profiler`, PyTorch's profiler: time each op of a forward and backward pass
(`profile`, `record_function`), summarise them (`key_averages().table()`), export a
Chrome trace, and profile a few steps of a training loop (`schedule`,
`tensorboard_trace_handler`).

    >>> with lm.profiler.profile() as prof:
    ...     _ = (lm.ones(4, 4) @ lm.ones(4, 4)).relu()
    >>> "MatMul" in prof.key_averages().table(sort_by="cpu_time_total")
    True
"""

from lamina.profiler.profile import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)
from lamina.profiler.recorder import FunctionEvent
from lamina.profiler.tables import EventList, FunctionEventAvg

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction",
           "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
