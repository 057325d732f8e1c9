"""Buffer assignment: static buffers (slots) for the outputs of kernels that write into a
given array, each slot handed to the next value of its shape and dtype once its value is
dead: interval colouring over the liveness. An elementwise kernel may take the slot of an
input it reads last, writing its result over that input."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from lamina.plan.trace import Node, Trace

SlotMeta = tuple[tuple[int, ...], Any]  # a slot's (shape, dtype)


def assign_slots(trace: Trace, forward: list[Node], last_use: dict[int, int]
                 ) -> tuple[dict[int, int], list[SlotMeta]]:
    """(value -> slot, each slot's shape and dtype) for the forward's kernel outputs."""
    free: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    meta: list[SlotMeta] = []
    slots: dict[int, int] = {}
    releases: dict[int, list[int]] = defaultdict(list)  # step -> slots free after it
    outputs = set(trace.outputs)
    for t, n in enumerate(forward):
        fn = n.fn
        in_place = []
        if getattr(fn, "writes_over_input", False):
            in_place = [slots[v] for v in n.inputs if v in slots and last_use[v] == t]
        for v in n.outputs:
            if not getattr(fn, "writes_output", False) or v in outputs:
                continue
            key = (trace.shapes[v], np.dtype(trace.dtypes[v]).str)
            same = [s for s in in_place if meta[s] == (key[0], np.dtype(key[1]))]
            if same:
                s = same[0]
                in_place.remove(s)
                releases[t] = [r for r in releases[t] if r != s]
            elif free[key]:
                s = free[key].pop()
            else:
                s = len(meta)
                meta.append((key[0], np.dtype(key[1])))
            slots[v] = s
            releases[last_use[v]].append(s)
        for s in releases.pop(t, []):
            shape, dtype = meta[s]
            free[(shape, dtype.str)].append(s)
    return slots, meta
