"""Liveness: from which step to which step each value's memory must stay as it is.

Timeline: forward node k runs at time k, backward node j at time F + j. A value lives from
the step that makes it to the last step that reads it: a forward op taking it as input, a
backward op whose op kept it (what ops declare with `save_for_backward`), or the end of
the step for a requested output; a view keeps the array it views alive as long as itself.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from lamina.plan.trace import Node, Trace


def shares(a: Any, b: Any) -> bool:
    """Whether two arrays may share memory (neither empty)."""
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.size > 0
            and b.size > 0 and np.may_share_memory(a, b))


def kept_for_backward(n: Node, arrays: list[Any]) -> set[int]:
    """The node's input and output values whose memory its op declared it keeps for
    backward (`save_for_backward`), found by memory: a view of a value keeps it."""
    kept = [a for a in n.fn.saved_tensors if isinstance(a, np.ndarray)]
    return {v for v in (*n.inputs, *n.outputs) if any(shares(a, arrays[v]) for a in kept)}


class Liveness:
    """The liveness of one program's values, read off `arrays` (each value's array from a
    probe run of the forward, which leaves every op holding what it keeps)."""

    def __init__(self, trace: Trace, forward: list[Node], backward: list[Node],
                 arrays: list[Any]) -> None:
        self.trace, self.forward, self.arrays = trace, forward, arrays
        self.kept = {id(n): kept_for_backward(n, arrays) for n in backward}
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
                    if shares(self.arrays[out], self.arrays[v]):
                        last[v] = max(last.get(v, 0), last[out])
        return last

    def dies_at(self, v: int, t: int) -> bool:
        """Whether step t is the last to read value v and every value sharing its memory
        (a view of it, or what it views), so the op at t may overwrite it."""
        trace, outputs = self.trace, set(self.trace.outputs)
        if trace.kinds[v] != "op" or self.last_use.get(v) != t or v in outputs:
            return False
        return not any(u != v and (u in outputs or self.last_use.get(u, t) > t)
                       and shares(self.arrays[u], self.arrays[v])
                       for u in range(len(trace.kinds)) if trace.kinds[u] != "const")

    def alive_throughout(self, v: int) -> bool:
        """Whether value v lives through the whole step anyway: a parameter, the batch, a
        requested output, or a view of one."""
        if self.trace.kinds[v] in ("param", "input"):
            return True
        return any(u == v or shares(self.arrays[u], self.arrays[v]) for u in self.trace.outputs)

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
