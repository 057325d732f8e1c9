"""`lamina.autograd.profiler`, PyTorch's older profiler names (`torch.autograd.profiler`):
the same recorder as `lamina.profiler`, with the older constructor and attributes.

    >>> with lm.autograd.profiler.profile() as prof:
    ...     _ = lm.ones(2).exp()
    >>> [e.name for e in prof.function_events]
    ['Exp']
"""

from __future__ import annotations

from typing import Any

from lamina.profiler.profile import ProfilerActivity, record_function
from lamina.profiler.profile import profile as _profile
from lamina.profiler.tables import EventList

__all__ = ["profile", "record_function"]


class profile(_profile):  # noqa: N801 - PyTorch's name
    """Record the ops run inside the block unless `enabled=False`; `function_events`,
    `key_averages()`, `table()` and `export_chrome_trace` give them.

    Examples:
        >>> with lm.autograd.profiler.profile(record_shapes=True) as prof:
        ...     _ = lm.ones(2, 3).sum()
        >>> prof.function_events[0].input_shapes
        [[2, 3]]
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 record_shapes: bool = False, with_flops: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_modules: bool = False, use_cpu: bool = True, **kwargs: Any) -> None:
        super().__init__(activities=[ProfilerActivity.CPU] if enabled and use_cpu else [],
                         record_shapes=record_shapes, profile_memory=profile_memory)

    @property
    def function_events(self) -> EventList:
        return self.events()

    @property
    def self_cpu_time_total(self) -> float:
        """The summed self time of every event, in microseconds."""
        return self.events().self_cpu_time_total()

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        return self.events().table(sort_by=sort_by, row_limit=row_limit, **kwargs)
