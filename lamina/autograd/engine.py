"""The backward engine: walks the graph from a root in reverse generation order.

Functions are popped from a heap keyed by generation (the longest path from a leaf), so a
Function runs only after every Function that consumes its outputs: no recursion, and a
value used twice receives the sum of both gradients before its creator runs.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.backend import is_array
from lamina.errors import ShapeError

if TYPE_CHECKING:
    from lamina.autograd.function import Function


def backward(root: Tensor, grad: Any = None, retain_graph: bool = False) -> None:
    """Accumulate d(root)/d(leaf) into `.grad` of every leaf that requires grad."""
    for _ in _run(root, grad, retain_graph, pending=None):
        pass


def backward_stream(root: Tensor, grad: Any = None, retain_graph: bool = False) -> Iterator[Tensor]:
    """Backward as a stream: yield each leaf as soon as its `.grad` is final.

    A leaf is final when every Function that consumed it has run, so a caller can ship a
    parameter's gradient (a push to a parameter server) while the rest of backward runs.
    Leaves come in the order their gradients complete, each exactly once.

    Example:
        >>> for p in lm.backward_stream(loss):
        ...     client.push(names[id(p)], p.grad)
    """
    if root.creator is None:
        return _run(root, grad, retain_graph, pending=None)
    return _run(root, grad, retain_graph, pending=_count_leaf_uses(root.creator))


def _count_leaf_uses(start: Function) -> dict[int, int]:
    """How many graph edges reach each leaf: its gradient is final after that many."""
    pending: dict[int, int] = {}
    stack, seen = [start], {start}
    while stack:
        f = stack.pop()
        for x, need in zip(f.inputs, f.needs_input_grad):
            if not need:
                continue
            if x.creator is None:
                pending[id(x)] = pending.get(id(x), 0) + 1
            elif x.creator not in seen:
                seen.add(x.creator)
                stack.append(x.creator)
    return pending


def _initial_grad(root: Tensor, grad: Any) -> Any:
    if grad is None:
        if root.data.size != 1:
            raise RuntimeError(
                f"backward: grad can be implicit only for a scalar output; got shape "
                f"{root.shape}. Pass a gradient of that shape, or reduce first (loss.sum())."
            )
        return np.ones_like(root.data)
    if isinstance(grad, Tensor):
        grad = grad.data
    if not is_array(grad):
        grad = np.asarray(grad, dtype=root.dtype)
    if grad.shape != root.shape:
        raise ShapeError(
            f"backward: gradient shape does not match the output; expected {root.shape}, "
            f"got {grad.shape}"
        )
    return grad.astype(root.dtype, copy=False)


def _run(root: Tensor, grad: Any, retain_graph: bool, pending: dict[int, int] | None):
    if not root.requires_grad:
        raise RuntimeError(
            "backward: this tensor does not require grad and has no creator; build it from "
            "a tensor with requires_grad=True, outside no_grad()"
        )
    gy = _initial_grad(root, grad)
    given: set[int] = {id(gy)}
    if root.creator is None:
        accumulate_grad(root, gy, given)
        yield root
        return
    # Pending gradients, per Function, one slot per output. Keyed by the Function (kept
    # alive here), not by the output tensors, which may be gone by the time it runs.
    grads: dict[Function, list[Any]] = {root.creator: _slots(root.creator)}
    grads[root.creator][root.output_index] = gy
    order = itertools.count()
    heap = [(-root.creator.generation, next(order), root.creator)]
    while heap:
        f = heapq.heappop(heap)[2]
        gxs = _call_backward(f, grads.pop(f))
        for x, gx, need in zip(f.inputs, gxs, f.needs_input_grad):
            if not need:
                continue
            gx = _checked_grad(f, x, gx)
            creator = x.creator
            if creator is None:
                accumulate_grad(x, gx, given)
                if pending is not None:
                    pending[id(x)] -= 1
                    if pending[id(x)] == 0:
                        yield x
                continue
            slots = grads.get(creator)
            if slots is None:
                slots = grads[creator] = _slots(creator)
                heapq.heappush(heap, (-creator.generation, next(order), creator))
            i = x.output_index
            slots[i] = gx if slots[i] is None else slots[i] + gx
        if not retain_graph:
            f.release()


def _slots(f: Function) -> list[Any]:
    if f.released:
        raise RuntimeError(
            f"backward: {f.name} was already backpropagated and its saved arrays freed; "
            "call backward(retain_graph=True) the first time to go through a graph twice"
        )
    return [None] * f.n_outputs


def _call_backward(f: Function, gys: list[Any]) -> tuple[Any, ...]:
    for i, gy in enumerate(gys):
        if gy is None:  # an output nobody used still needs a gradient: zeros
            gys[i] = np.zeros(*f.output_meta[i])
    gxs = f.backward(*gys)
    if not isinstance(gxs, tuple):
        gxs = (gxs,)
    if len(gxs) != len(f.inputs):
        raise RuntimeError(
            f"{f.name}.backward returned {len(gxs)} gradients; expected {len(f.inputs)}, one "
            "per input (None where needs_input_grad is False)"
        )
    return gxs


def _checked_grad(f: Function, x: Tensor, gx: Any) -> Any:
    """The gradient for input x, in x's dtype: an op that promoted its float inputs (float32
    with float64) computed in the wider one, and each input gets its gradient back in its
    own dtype, as PyTorch's autograd gives it."""
    if gx is None:
        raise RuntimeError(f"{f.name}.backward returned None for an input that requires grad")
    want = x.data.dtype
    if gx.shape == x.data.shape and gx.dtype != want and gx.dtype.kind == want.kind == "f":
        return gx.astype(want)
    if gx.shape != x.data.shape or gx.dtype != want:
        raise ShapeError(
            f"{f.name}.backward: gradient does not match its input; expected shape "
            f"{x.data.shape} dtype {want}, got shape {gx.shape} dtype {gx.dtype}"
        )
    return gx


def accumulate_grad(x: Tensor, gx: Any, given: set[int]) -> None:
    """Add gx to a leaf's .grad; `given` holds ids of arrays already handed to a leaf."""
    # A leaf must own its .grad, since optimizers and clipping update grads in place: an
    # op may hand one array to several inputs (add returns gy twice) or return a view.
    if x.grad is None:
        if id(gx) in given or not gx.flags.owndata:
            gx = gx.copy()
        x.grad = gx
        given.add(id(gx))
    else:
        x.grad = x.grad + gx
