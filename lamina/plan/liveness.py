"""Liveness: from which step to which step each value's memory must stay as it is.

Timeline: forward node k runs at time k, backward node j at time F + j. A value lives from
the step that makes it to the last step that reads it: a forward op taking it as input, a
backward op whose op kept it (what ops declare with `save_for_backward`), or the end of
the step for a requested output; a view keeps the array it views alive as long as itself.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from typing import Any

import numpy as np
from numpy.lib.array_utils import byte_bounds

from lamina.plan.trace import Node, Trace

Extent = tuple[int, int, int]  # (the allocation's number, first byte, end): see Extents


class Extents:
    """Where arrays lie in memory, recorded while they are alive, to compare after they
    are gone: what np.may_share_memory compares (byte bounds), within one allocation. An
    allocation (the array at the end of a chain of `.base`) is numbered when first seen
    and forgotten when freed, so a later one at the same address gets another number:
    a probe of the forward can free each array at its last use, as a run does."""

    def __init__(self) -> None:
        self.numbers: dict[int, int] = {}  # id(allocation) -> its number
        self.count = 0  # numbers given so far: none is given twice
        # Weak references, not weakref.finalize: these die with the Extents, so that a
        # parameter's array, alive for the model's lifetime, keeps no record of each compile.
        self.watching: list[weakref.ref] = []
        self.held: list[Any] = []  # allocations that cannot be watched: kept

    def of(self, a: Any) -> Extent | None:
        if not isinstance(a, np.ndarray) or a.size == 0:
            return None
        root = _allocation(a)
        key = id(root)
        number = self.numbers.get(key)
        if number is None:
            number = self.numbers[key] = self.count
            self.count += 1
            try:
                self.watching.append(weakref.ref(root, lambda _: self.numbers.pop(key, None)))
            except TypeError:
                self.held.append(root)
        return (number, *byte_bounds(a))


def _allocation(a: Any) -> Any:
    """The object whose memory array a lies in: the end of its chain of views, through
    memoryviews too (np.asarray(memoryview(b)) lies in b's memory)."""
    while True:
        under = (a.base if isinstance(a, np.ndarray) else
                 a.obj if isinstance(a, memoryview) else None)
        if under is None:
            return a
        a = under


def overlap(a: Extent | None, b: Extent | None) -> bool:
    """Whether two recorded arrays may share memory (neither empty)."""
    return a is not None and b is not None and a[0] == b[0] and a[1] < b[2] and b[1] < a[2]


def kept_for_backward(n: Node, extents: list[Extent | None], where: Extents) -> set[int]:
    """The node's input and output values whose memory its op declared it keeps for
    backward (`save_for_backward`), found by memory: a view of a value keeps it."""
    kept = [where.of(a) for a in n.fn.saved_tensors if isinstance(a, np.ndarray)]
    return {v for v in (*n.inputs, *n.outputs) if any(overlap(a, extents[v]) for a in kept)}


class Liveness:
    """The liveness of one program's values, read off `extents` (where each value's array
    lay in a probe run of the forward, which leaves every op holding what it keeps;
    recorded by `where`)."""

    def __init__(self, trace: Trace, forward: list[Node], backward: list[Node],
                 extents: list[Extent | None], where: Extents) -> None:
        self.trace, self.forward, self.extents = trace, forward, extents
        self.kept = {id(n): kept_for_backward(n, extents, where) for n in backward}
        self.kept_by: dict[int, set[int]] = defaultdict(set)  # value -> nodes keeping it
        for n in backward:
            for v in self.kept[id(n)]:
                self.kept_by[v].add(id(n))
        self.last_use = self._last_use(backward)

    def _last_use(self, backward: list[Node]) -> dict[int, int]:
        """Last step reading each op value (a requested output lives to the end)."""
        end = len(self.forward) + len(backward)
        last: dict[int, int] = {}
        for t, n in enumerate(self.forward):
            for v in n.outputs:
                last.setdefault(v, t)
            for v in n.inputs:
                last[v] = max(last.get(v, t), t)
        for j, n in enumerate(backward):
            for v in self.kept[id(n)]:
                last[v] = max(last.get(v, 0), len(self.forward) + j)
        for v in self.trace.outputs:
            last[v] = end
        # A view keeps the array it views alive: walk back so chains of views propagate.
        for n in reversed(self.forward):
            for out in n.outputs:
                for v in n.inputs:
                    if overlap(self.extents[out], self.extents[v]):
                        last[v] = max(last.get(v, 0), last[out])
        return last

    def dies_at(self, v: int, t: int) -> bool:
        """Whether step t is the last to read value v and every value sharing its memory
        (a view of it, or what it views), so the op at t may overwrite it."""
        trace, outputs = self.trace, set(self.trace.outputs)
        if trace.kinds[v] != "op" or self.last_use.get(v) != t or v in outputs:
            return False
        return not any(u != v and (u in outputs or self.last_use.get(u, t) > t)
                       and overlap(self.extents[u], self.extents[v])
                       for u in range(len(trace.kinds)) if trace.kinds[u] != "const")

    def alive_throughout(self, v: int) -> bool:
        """Whether value v lives through the whole step anyway: a parameter, the batch, a
        requested output, or a view of one."""
        if self.trace.kinds[v] in ("param", "input"):
            return True
        return any(u == v or overlap(self.extents[u], self.extents[v]) for u in self.trace.outputs)

    def kept_by_another(self, v: int, n: Node) -> bool:
        """Whether some op other than n's keeps value v for its backward."""
        return bool(self.kept_by[v] - {id(n)})

    def frees(self) -> dict[int, list[int]]:
        """Values to drop after each step, so unpooled arrays are freed at their last use."""
        frees: dict[int, list[int]] = defaultdict(list)
        outputs = set(self.trace.outputs)
        for v, t in self.last_use.items():
            if v not in outputs and self.trace.kinds[v] == "op":
                frees[t].append(v)
        return frees
