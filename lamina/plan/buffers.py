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


def release_steps(slots: dict[int, int], meta: list[SlotMeta], last_use: dict[int, int],
                  end: int, smallest: int, largest: int) -> dict[int, list[int]]:
    """step -> the slots of `smallest` to `largest` bytes (exclusive) whose last value is
    last read at that step, before the step's `end` (a slot a requested output views
    lives through it). A training step's slots hold the forward's activations,
    which die one layer after another in backward; pooled for the whole step, they sat
    beside the gradients that backward makes meanwhile (parameters' and activations'),
    where freed at their last read, as eager mode frees its graph, malloc hands their
    memory to those gradients. Outside that range a slot stays pooled: a small one is
    not worth the bookkeeping, and one past malloc's mmap threshold would be mapped,
    and faulted in page by page, again at every step."""
    last: dict[int, int] = {}
    for v, s in slots.items():
        last[s] = max(last.get(s, -1), last_use[v])
    sizes = slot_bytes(meta)
    steps: dict[int, list[int]] = defaultdict(list)
    for s, t in sorted(last.items()):
        if t < end and smallest <= sizes[s] < largest:
            steps[t].append(s)
    return dict(steps)


def slot_bytes(meta: list[SlotMeta]) -> list[int]:
    """Each slot's size in bytes."""
    return [int(np.prod(shape)) * dtype.itemsize for shape, dtype in meta]


def remake_steps(forward: list[Node], slots: dict[int, int], releases: dict[int, list[int]]
                 ) -> dict[int, list[int]]:
    """Forward step -> the released slots (see release_steps) it writes first: made again
    there, not all at the step's start, so that the heap's layout follows the forward's
    order as eager mode's does, and a slot is not held before its first value."""
    released = {s for ss in releases.values() for s in ss}
    steps: dict[int, list[int]] = {}
    for t, n in enumerate(forward):
        for v in n.outputs:
            s = slots.get(v)
            if s in released:
                released.discard(s)
                steps.setdefault(t, []).append(s)
    return steps
