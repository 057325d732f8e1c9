"""An elementwise update rule run in pieces, one per thread.

An update such as SGD's reads and writes every element of the parameters, their
gradients and their state once or more per step: memory-bound, and NumPy runs it on one
core. A rule that treats each element on its own (`Optimizer.elementwise`) gives the same
result on any slice of the flattened arrays, so the step cuts the parameters, laid end to
end, into equal contiguous ranges and updates one range per thread.

Scalar state (Adam's step count) is worked out by every piece of a parameter alike and
written back once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lamina import parallel

MIN_PIECE = parallel.MIN_PIECE

Update = tuple[Any, Any, dict[str, Any], dict[str, Any]]  # param, grad, state, group


def splittable(update: Update) -> bool:
    """Contiguous NumPy arrays throughout, so flat slices are views of the real arrays."""
    param, grad, state, _ = update
    arrays = [param, grad, *(v for v in state.values() if _shaped_like(v, param))]
    return all(isinstance(a, np.ndarray) and a.flags.c_contiguous for a in arrays)


def run(rule: Callable[..., None], updates: list[Update], threads: int) -> None:
    """Apply `rule(param, grad, state, group)` to every update, in pieces over threads."""
    threads = min(threads, sum(u[0].size for u in updates) // MIN_PIECE)
    if threads < 2:
        for u in updates:
            rule(*u)
        return
    plan = parallel.ranges([u[0].size for u in updates], threads)
    views: dict[int, list[dict[str, Any]]] = {}

    def work(share: list[tuple[int, int, int]]) -> None:
        for i, lo, hi in share:
            views.setdefault(i, []).append(_run_piece(rule, updates[i], lo, hi))

    parallel.run_all([lambda s=share: work(s) for share in plan])
    for i, piece_views in views.items():
        _write_back(rule, updates[i], piece_views)


def _shaped_like(value: Any, param: Any) -> bool:
    return getattr(value, "shape", None) == param.shape and np.ndim(value) > 0


def _run_piece(rule: Callable[..., None], update: Update, lo: int, hi: int
               ) -> dict[str, Any]:
    param, grad, state, group = update
    view = {k: v.reshape(-1)[lo:hi] if _shaped_like(v, param) else v
            for k, v in state.items()}
    rule(param.reshape(-1)[lo:hi], grad.reshape(-1)[lo:hi], view, group)
    return view


def _write_back(rule: Callable[..., None], update: Update, views: list[dict[str, Any]]
                ) -> None:
    """Copy scalar state from the first piece; arrays were updated in place."""
    param, _, state, _ = update
    view = views[0]
    if view.keys() != state.keys():
        raise RuntimeError(f"{_owner(rule)}: update_param added state keys after the first "
                           "step, so it cannot run in pieces; set `elementwise = False`")
    for k, v in view.items():
        if not _shaped_like(state[k], param):
            state[k] = v
        elif not np.may_share_memory(v, state[k]):
            raise RuntimeError(f"{_owner(rule)}: update_param replaced state[{k!r}] "
                               "instead of updating it in place, so it cannot run in "
                               "pieces; set `elementwise = False` on the class")


def _owner(rule: Callable[..., None]) -> str:
    owner = getattr(rule, "__self__", None)
    return type(owner).__name__ if owner is not None else getattr(rule, "__name__", "rule")
