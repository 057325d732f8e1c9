"""Walking the ops a case records, and checking what each keeps against what it declares."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

import lamina as lm
from lamina.autograd import function


@contextlib.contextmanager
def inputs_kept_whole() -> Iterator[None]:
    """Ops record every input whole, not as its place in the graph (an op with
    keeps_inputs = False keeps only that: lamina/autograd/place.py), so that a walk of
    the graph finds the arrays each op read."""
    places = function.places
    function.places = lambda xs, saved_mask: xs
    try:
        yield
    finally:
        function.places = places


def recorded_ops(outputs: Any) -> list[tuple[Any, list[np.ndarray]]]:
    """(op, its output arrays) for every op behind the output tensors, before backward."""
    found: dict[int, tuple[Any, list[np.ndarray]]] = {}
    todo = [y for y in (outputs if isinstance(outputs, (tuple, list)) else [outputs])
            if isinstance(y, lm.Tensor)]
    seen: set[int] = set()
    while todo:
        t = todo.pop()
        if id(t) in seen or t.creator is None:
            continue
        seen.add(id(t))
        outs = found.setdefault(id(t.creator), (t.creator, [None] * t.creator.n_outputs))[1]
        outs[t.output_index] = t.array
        todo.extend(t.creator.inputs)
    return list(found.values())


def _arrays_in(obj: Any, depth: int = 0) -> list[np.ndarray]:
    """Every array an attribute holds, through containers and objects, a few levels deep:
    reflection that only this test uses, to check the ops' declarations."""
    if isinstance(obj, np.ndarray):
        return [obj]
    if depth > 3:
        return []
    if isinstance(obj, dict):
        return [a for v in obj.values() for a in _arrays_in(v, depth + 1)]
    if isinstance(obj, (list, tuple)):
        return [a for v in obj for a in _arrays_in(v, depth + 1)]
    if hasattr(obj, "__dict__") and not isinstance(obj, type):
        return _arrays_in(vars(obj), depth + 1)
    return []


def _shares(a: Any, b: Any) -> bool:
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.size > 0
            and b.size > 0 and np.may_share_memory(a, b))


def undeclared(op: Any, values: list[np.ndarray]) -> list[str]:
    """The attributes of op holding memory of one of `values` (its inputs' and outputs'
    arrays) that no array in its saved_tensors shares: what a plan would reuse under it."""
    declared = [a for a in op.saved_tensors if isinstance(a, np.ndarray)]
    held = {k: _arrays_in(v) for k, v in vars(op).items()
            if k not in ("inputs", "saved_tensors", "out_buffers")}
    return sorted({k for v in values if v is not None
                   and not any(_shares(d, v) for d in declared)
                   for k, arrays in held.items() if any(_shares(a, v) for a in arrays)})
