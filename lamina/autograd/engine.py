"""The backward engine: walks the graph from a root in reverse generation order.

Functions are popped from a heap keyed by generation (the longest path from a leaf), so a
Function runs only after every Function that consumes its outputs: no recursion, and a
value used twice receives the sum of both gradients before its creator runs.
"""

from __future__ import annotations

import heapq
import itertools
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina import state
from lamina.autograd import higher_order
from lamina.autograd.backward_call import (
    call_backward,
    checked_backward,
    checked_grad,
    edge,
    empty_slots,
)
from lamina.autograd.delivery import (
    after_accumulating,
    capture_outputs,
    deliver,
    post_hooked,
    run_output_hooks,
)
from lamina.autograd.function import check_versions
from lamina.autograd.tensor import Tensor
from lamina.backend import is_array
from lamina.errors import ShapeError

if TYPE_CHECKING:
    from lamina.autograd.function import Function


# PyTorch's backward gives an overflow, 0 * inf or x / 0 its IEEE value without a word:
# one errstate for a whole backward, not one per op (each costs as much as a small op).
QUIET = {"over": "ignore", "invalid": "ignore", "divide": "ignore"}


def backward(root: Tensor, grad: Any = None, retain_graph: bool = False, inputs: Any = None,
             create_graph: bool = False) -> None:
    """Accumulate d(root)/d(leaf) into `.grad` of every leaf that requires grad (only of
    `inputs`, when given).

    Examples:
        >>> x = lm.tensor([1.0, 2.0], requires_grad=True)
        >>> lm.backward((x * x).sum()); x.grad
        tensor([2., 4.])
    """
    if create_graph:  # PyTorch's warning, word for word: the same cycle forms here
        warnings.warn(
            "Using backward() with create_graph=True will create a reference cycle between "
            "the parameter and its gradient which can cause a memory leak. We recommend "
            "using autograd.grad when creating the graph to avoid this. If you have to use "
            "this function, make sure to reset the .grad fields of your parameters to None "
            "after use to break the cycle and avoid the leak.", UserWarning, stacklevel=3)
    only = None
    if inputs is not None:
        only = _capture_set([inputs] if isinstance(inputs, Tensor) else inputs, "backward")
    with np.errstate(**QUIET):
        for _ in _run(root, grad, retain_graph, pending=None, only=only, graph=create_graph):
            pass


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool | None = None,
         materialize_grads: bool = False, stop: Any = None) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs`, returned, not accumulated.

    Args:
        outputs: a tensor or a sequence of tensors.
        inputs: the tensors (leaves or not) to differentiate with respect to.
        grad_outputs: dL/d(output) for each output; None for one-element outputs.
        retain_graph: keep the graph for another backward (by default when create_graph).
        create_graph: record the gradients as ops, so they can be differentiated again
            (lamina.autograd.higher_order).
        allow_unused: return None for an input the outputs do not depend on, instead of
            raising; `materialize_grads=True` returns zeros instead.

    Returns:
        A tuple with one gradient Tensor (or None) per input.

    Examples:
        >>> x = lm.tensor([1.0, 2.0], requires_grad=True)
        >>> (g,) = lm.autograd.grad((x * x).sum(), x)
        >>> g
        tensor([2., 4.])
    """
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    gos = ([grad_outputs] if isinstance(grad_outputs, Tensor) or grad_outputs is None
           and len(outs) == 1 else list(grad_outputs or [None] * len(outs)))
    capture = _capture_set(ins, "autograd.grad")
    found: dict[Any, Any] = {}
    for i, (out, go) in enumerate(zip(outs, gos)):
        keep = bool(retain_graph) or i < len(outs) - 1
        with np.errstate(**QUIET):
            for _ in _run(out, go, keep, pending=None, only=capture, found=found,
                          graph=create_graph, stop=stop):
                pass
    results = []
    for x in ins:
        g = found.get(_key(x))
        if g is None and not (allow_unused or materialize_grads):
            raise RuntimeError(
                "autograd.grad: one of the differentiated Tensors appears to not have been "
                "used in the graph; set allow_unused=True if this is the desired behavior"
            )
        if g is None and materialize_grads:
            g = np.zeros_like(x.array)
        results.append(g if g is None or isinstance(g, Tensor) else Tensor(g))
    return tuple(results)


def _key(x: Tensor) -> Any:
    """Where x's gradient is found: the leaf itself, or (its creator, its output slot)."""
    return id(x) if x.creator is None else (x.creator, x.output_index)


def _capture_set(tensors: Any, who: str) -> set[Any]:
    for x in tensors:
        if not isinstance(x, Tensor) or not x.requires_grad:
            raise RuntimeError(f"{who}: every input must be a Tensor that requires grad; "
                               f"got {type(x).__name__}")
    return {_key(x) for x in tensors}


def backward_stream(root: Tensor, grad: Any = None, retain_graph: bool = False) -> Iterator[Tensor]:
    """Backward as a stream: yield each leaf as soon as its `.grad` is final.

    A leaf is final when every Function that consumed it has run, so a caller can ship a
    parameter's gradient (a push to a parameter server) while the rest of backward runs.
    Leaves come in the order their gradients complete, each exactly once.

    Examples:
        >>> w = lm.ones(2, requires_grad=True); v = lm.ones(2, requires_grad=True)
        >>> loss = ((w * 2).sum() * 3) + (v * 5).sum()
        >>> [p.grad.tolist() for p in lm.backward_stream(loss)]   # as each is final
        [[5.0, 5.0], [6.0, 6.0]]
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
            creator = x.creator if x._extra is None else edge(x, f)[0]
            if creator is None:
                pending[id(x)] = pending.get(id(x), 0) + 1
            elif creator not in seen:
                seen.add(creator)
                stack.append(creator)
    return pending


def _initial_grad(root: Tensor, grad: Any) -> Any:
    if grad is None:
        if root.array.size != 1:
            raise RuntimeError(
                f"backward: grad can be implicit only for a scalar output; got shape "
                f"{tuple(root.shape)}. Pass a gradient of that shape, or reduce first (loss.sum())."
            )
        return np.ones_like(root.array)
    if isinstance(grad, Tensor):
        grad = grad.array
    if not is_array(grad):
        grad = np.asarray(grad, dtype=root.dtype)
    if grad.shape != root.shape:
        raise ShapeError(
            f"backward: gradient shape does not match the output; expected {tuple(root.shape)}, "
            f"got {tuple(grad.shape)}"
        )
    return grad.astype(root.dtype, copy=False)


def _run(root: Tensor, grad: Any, retain_graph: bool, pending: dict[int, int] | None,
         only: set[Any] | None = None, found: dict[Any, Any] | None = None,
         graph: bool = False, stop: Any = None):
    """The backward walk. `only`: the leaves (by id) and non-leaf outputs (by creator and
    slot) whose gradients are wanted; with `found`, they are stored there instead of in
    `.grad` (autograd.grad), else only those leaves accumulate (backward(inputs=...)).
    `graph` (create_graph): gradients are Tensors made by recorded ops, and the graph is
    kept, since they read it. `stop`: ops whose outputs' gradients are captured, not
    propagated further (a derivative rule differentiating its own recomputation)."""
    if not root.requires_grad:
        raise RuntimeError(
            "element 0 of tensors does not require grad and does not have a grad_fn: "
            "backward needs a tensor computed from one with requires_grad=True, outside "
            "no_grad()"
        )
    gy = _initial_grad(root, grad)
    if graph:
        gy = grad if isinstance(grad, Tensor) else Tensor(gy)
    given: set[int] = {id(gy)}
    if root.creator is None:
        deliver(root, gy, given, only, found)
        after_accumulating([root] if post_hooked(root, only, found) else [])
        yield root
        return
    hooked: dict[int, Tensor] = {}  # leaves with post-accumulate hooks that got a gradient
    # Pending gradients, per Function, one slot per output. Keyed by the Function (kept
    # alive here), not by the output tensors, which may be gone by the time it runs.
    grads: dict[Function, list[Any]] = {root.creator: empty_slots(root.creator)}
    grads[root.creator][root.output_index] = gy
    order = itertools.count()
    heap = [(-root.creator.generation, next(order), root.creator)]
    while heap:
        f = heapq.heappop(heap)[2]
        gys = grads.pop(f)
        if "tensor_hooks" in f.__dict__:
            run_output_hooks(f, gys)
        if found is not None:
            capture_outputs(f, gys, only, found)
            if stop is not None and f in stop:
                continue
        if f.saved_mask or f.saved_outputs:
            check_versions(f)
        call = higher_order.call_backward if graph else call_backward
        gxs = checked_backward(f, gys, call) if state.anomaly else call(f, gys)
        # Edges as they were when f ran: a tensor written in place since has a new creator,
        # which only the ops after the write may reach.
        for x, gx, need in zip(f.inputs, gxs, f.needs_input_grad):
            if not need:
                continue
            gx = checked_grad(f, x, gx)
            if x._extra is None:
                creator, i = x.creator, x.output_index
            else:
                creator, i = edge(x, f)
            if creator is None:
                deliver(x, gx, given, only, found)
                if post_hooked(x, only, found):
                    hooked[id(x)] = x
                if pending is not None:
                    pending[id(x)] -= 1
                    if pending[id(x)] == 0:
                        yield x
                continue
            slots = grads.get(creator)
            if slots is None:
                slots = grads[creator] = empty_slots(creator)
                heapq.heappush(heap, (-creator.generation, next(order), creator))
            slots[i] = gx if slots[i] is None else slots[i] + gx
        if not (retain_graph or graph):
            f.release()
    after_accumulating(list(hooked.values()))
