"""A profile's summary: events grouped by name (and input shapes) into `FunctionEventAvg`
rows, and `EventList.table`, the table PyTorch's profiler prints, with its columns, units
and sort keys."""

from __future__ import annotations

from typing import Any

from lamina.profiler.recorder import FunctionEvent

SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count",
             "cpu_memory_usage", "self_cpu_memory_usage")


class FunctionEventAvg:
    """The events of one name (and, grouped so, one list of input shapes), summed.

    Examples:
        >>> with lm.profiler.profile() as prof:
        ...     x = lm.ones(2).exp().exp()
        >>> row = prof.key_averages()[0]
        >>> row.key, row.count
        ('Exp', 2)
    """

    def __init__(self, key: str, input_shapes: list[list[int]]) -> None:
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.is_user_annotation = False

    def add(self, event: Any) -> FunctionEventAvg:
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.cpu_memory_usage += event.cpu_memory_usage
        self.self_cpu_memory_usage += event.self_cpu_memory_usage
        self.is_user_annotation = event.is_user_annotation
        return self

    @property
    def cpu_time(self) -> float:
        """The mean time of one call, in microseconds."""
        return self.cpu_time_total / max(self.count, 1)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}"
                f"us cpu_time={self.cpu_time:.3f}us input_shapes={self.input_shapes}>")


def format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class EventList(list):
    """Events or averaged rows, with PyTorch's `table` and `key_averages`.

    Examples:
        >>> with lm.profiler.profile() as prof:
        ...     _ = lm.ones(3).exp().sum()
        >>> [row.key for row in prof.key_averages()]
        ['Exp', 'Sum']
    """

    def __init__(self, items: Any = (), profile_memory: bool = False,
                 with_shapes: bool = False) -> None:
        super().__init__(items)
        self.profile_memory, self.with_shapes = profile_memory, with_shapes

    def key_averages(self, group_by_input_shape: bool = False,
                     group_by_stack_n: int = 0) -> EventList:
        """One row per name (and per input shapes when `group_by_input_shape`), in the
        order the names first ran."""
        rows: dict[tuple, FunctionEventAvg] = {}
        for event in self:
            shapes = event.input_shapes if group_by_input_shape else []
            key = (event.key, str(shapes))
            if key not in rows:
                rows[key] = FunctionEventAvg(event.key, shapes)
            rows[key].add(event)
        return EventList(rows.values(), self.profile_memory, group_by_input_shape)

    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False) -> str:
        """The rows as PyTorch prints them: times in us/ms/s, percentages of the whole
        self time, memory when profiled, input shapes when grouped by them."""
        rows = list(self)
        if top_level_events_only:
            rows = [r for r in rows if getattr(r, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by not in SORT_KEYS:
                raise ValueError(f"table: sort_by must be one of {', '.join(SORT_KEYS)}; "
                                 f"got {sort_by!r}")
            rows.sort(key=lambda r: getattr(r, sort_by), reverse=True)
        rows = rows[:row_limit] if row_limit > 0 else rows
        total = self.self_cpu_time_total() or 1.0
        names = [_clip(r.key, max_name_column_width) for r in rows]
        name_width = max([len(n) for n in names] + [4]) + 4
        heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
        if self.profile_memory:
            heads += ["CPU Mem", "Self CPU Mem"]
        heads.append("# of Calls")
        widths = [name_width] + [12] * len(heads)
        if self.with_shapes:
            shapes = [_clip(str(r.input_shapes), max_shapes_column_width) for r in rows]
            heads.append("Input Shapes")
            widths.append(max([len(s) for s in shapes] + [12]) + 2)
        rule = "".join("-" * w + "  " for w in widths)
        lines = [rule, _line(["Name", *heads], widths), rule]
        for i, (name, r) in enumerate(zip(names, rows)):
            cells = [name, f"{100 * r.self_cpu_time_total / total:.2f}%",
                     format_time(r.self_cpu_time_total),
                     f"{100 * r.cpu_time_total / total:.2f}%", format_time(r.cpu_time_total),
                     format_time(r.cpu_time)]
            if self.profile_memory:
                cells += [format_memory(r.cpu_memory_usage),
                          format_memory(r.self_cpu_memory_usage)]
            cells.append(str(r.count))
            if self.with_shapes:
                cells.append(shapes[i])
            lines.append(_line(cells, widths))
        lines += [rule, f"Self CPU time total: {format_time(self.self_cpu_time_total())}"]
        return ("" if header is None else header + "\n") + "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.table()


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _line(cells: list[str], widths: list[int]) -> str:
    return "".join(c.rjust(w) + "  " for c, w in zip(cells, widths))


def events_list(events: list[FunctionEvent], profile_memory: bool) -> EventList:
    return EventList(sorted(events, key=lambda e: e.start_ns), profile_memory)
