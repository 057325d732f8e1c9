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
from lamina.autograd.tensor import Tensor
from lamina.backend import is_array
from lamina.errors import ShapeError

if TYPE_CHECKING:
    from lamina.autograd.function import Function


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
            creator = x.creator if x._extra is None else _edge(x, f)[0]
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
        _deliver(root, gy, given, only, found)
        _after_accumulating([root] if _hooked(root, only, found) else [])
        yield root
        return
    hooked: dict[int, Tensor] = {}  # leaves with post-accumulate hooks that got a gradient
    # Pending gradients, per Function, one slot per output. Keyed by the Function (kept
    # alive here), not by the output tensors, which may be gone by the time it runs.
    grads: dict[Function, list[Any]] = {root.creator: _slots(root.creator)}
    grads[root.creator][root.output_index] = gy
    order = itertools.count()
    heap = [(-root.creator.generation, next(order), root.creator)]
    while heap:
        f = heapq.heappop(heap)[2]
        gys = grads.pop(f)
        if "tensor_hooks" in f.__dict__:
            _run_output_hooks(f, gys)
        if found is not None:
            _capture_outputs(f, gys, only, found)
            if stop is not None and f in stop:
                continue
        if f.saved_mask or f.saved_outputs:
            _check_versions(f)
        call = higher_order.call_backward if graph else _call_backward
        gxs = _checked_backward(f, gys, call) if state.anomaly else call(f, gys)
        # Edges as they were when f ran: a tensor written in place since has a new creator,
        # which only the ops after the write may reach.
        for x, gx, need in zip(f.inputs, gxs, f.needs_input_grad):
            if not need:
                continue
            gx = _checked_grad(f, x, gx)
            if x._extra is None:
                creator, i = x.creator, x.output_index
            else:
                creator, i = _edge(x, f)
            if creator is None:
                _deliver(x, gx, given, only, found)
                if _hooked(x, only, found):
                    hooked[id(x)] = x
                if pending is not None:
                    pending[id(x)] -= 1
                    if pending[id(x)] == 0:
                        yield x
                continue
            slots = grads.get(creator)
            if slots is None:
                slots = grads[creator] = _slots(creator)
                heapq.heappush(heap, (-creator.generation, next(order), creator))
            slots[i] = gx if slots[i] is None else slots[i] + gx
        if not (retain_graph or graph):
            f.release()
    _after_accumulating(list(hooked.values()))


def _hooked(x: Tensor, only: set[Any] | None, found: dict[Any, Any] | None) -> bool:
    """Whether leaf x has post-accumulate hooks and this backward wrote its .grad."""
    return (x._extra is not None and "post_accumulate_hooks" in x._extra and found is None
            and (only is None or id(x) in only))


def _after_accumulating(leaves: list[Tensor]) -> None:
    """Each leaf's post-accumulate hooks, once per backward, its gradient complete (the
    sum over every path to it), as PyTorch calls them."""
    for x in leaves:
        for hook in list(x._extra["post_accumulate_hooks"]):
            hook(x)


def _edge(x: Tensor, f: Function) -> tuple[Any, int]:
    """(creator, output slot) of input x as f read it: where x stood in the graph before
    the first in-place write after f ran, or where it stands now."""
    for write, creator, i, _ in x._extra.get("past", ()):
        if f.seq < write:
            return creator, i
    return x.creator, x.output_index


def _shape_seen(x: Tensor, f: Function) -> tuple[int, ...]:
    """x's shape when f read it: an in-place view op (unsqueeze_) may have changed it."""
    if x._extra is not None:
        for write, _, _, shape in x._extra.get("past", ()):
            if f.seq < write:
                return shape
    return x.array.shape


def _slots(f: Function) -> list[Any]:
    if f.released:
        raise RuntimeError(
            f"backward: {f.name} was already backpropagated and its saved arrays freed; "
            "call backward(retain_graph=True) the first time to go through a graph twice"
        )
    return [None] * f.n_outputs


def _checked_backward(f: Function, gys: list[Any], call: Any) -> tuple[Any, ...]:
    """call(f, gys) under anomaly detection: a failure or a NaN shows f's forward line."""
    from lamina.autograd import anomaly

    try:
        gxs = call(f, gys)
    except Exception:
        anomaly.report(f)
        raise
    anomaly.check(f, gxs)
    return gxs


def _call_backward(f: Function, gys: list[Any]) -> tuple[Any, ...]:
    for i, gy in enumerate(gys):
        if gy is None:  # an output nobody used still needs a gradient: zeros
            gys[i] = np.zeros(*f.output_meta[i])
    if state.profiler is None:
        gxs = f.backward(*gys)
    else:
        gxs = state.profiler.run(f.name(), f.backward, gys)
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
    want, shape = x.array.dtype, _shape_seen(x, f)
    if gx.shape == shape and gx.dtype != want and gx.dtype.kind == want.kind == "f":
        return gx.astype(want)
    if gx.shape != shape or gx.dtype != want:
        raise ShapeError(
            f"{f.name}.backward: gradient does not match its input; expected shape "
            f"{shape} dtype {want}, got shape {tuple(gx.shape)} dtype {gx.dtype}"
        )
    return gx


def _deliver(x: Tensor, gx: Any, given: set[int], only: set[Any] | None,
             found: dict[Any, Any] | None) -> None:
    """Hand a leaf its gradient: through its hooks, then into .grad (or `found`)."""
    if x._extra is not None and x._extra.get("hooks"):
        gx = _apply_hooks(x._extra["hooks"], gx)
    if only is not None and id(x) not in only:
        return
    if found is not None:
        prev = found.get(id(x))
        found[id(x)] = gx if prev is None else prev + gx
        return
    accumulate_grad(x, gx, given)


def accumulate_grad(x: Tensor, gx: Any, given: set[int]) -> None:
    """Add gx to a leaf's .grad; `given` holds ids of arrays already handed to a leaf."""
    # A leaf must own its .grad, since optimizers and clipping update grads in place: an
    # op may hand one array to several inputs (add returns gy twice) or return a view.
    g = x._grad
    if isinstance(gx, Tensor):  # create_graph: .grad keeps the gradient's graph
        if g is None and id(gx) in given:
            gx = gx.clone()
        x._grad = gx if g is None else g + gx
        given.add(id(x._grad))
        return
    if g is None:
        if id(gx) in given or not gx.flags.owndata:
            gx = gx.copy()
        x._grad = Tensor(gx)
        given.add(id(gx))
    else:
        x._grad = Tensor(g.array + gx)


def _apply_hooks(hooks: list[Any], g: Any) -> Any:
    """g through the hooks: an array, or a Tensor under create_graph."""
    graph = isinstance(g, Tensor)
    for hook in list(hooks):
        out = hook(g if graph else Tensor(g))
        if out is None:
            continue
        if graph:
            g = out if isinstance(out, Tensor) else Tensor(np.asarray(out))
        else:
            g = out.array if isinstance(out, Tensor) else np.asarray(out)
    return g


def _run_output_hooks(f: Function, gys: list[Any]) -> None:
    """Hooks registered on f's outputs (register_hook, retain_grad) see their gradients."""
    for i, hooks in f.tensor_hooks.items():
        if gys[i] is not None and hooks:
            gys[i] = _apply_hooks(hooks, gys[i])


def _capture_outputs(f: Function, gys: list[Any], only: set[Any], found: dict[Any, Any]
                     ) -> None:
    """autograd.grad: keep the gradients of the asked-for outputs of f, summed over the
    outputs differentiated (one walk each)."""
    for i, gy in enumerate(gys):
        if (f, i) in only and gy is not None:
            prev = found.get((f, i))
            found[(f, i)] = gy if prev is None else prev + gy


def _check_versions(f: Function) -> None:
    """Refuse to run backward on arrays changed in place since the op saved them."""
    mask, i = f.saved_mask, 0
    while mask:
        vc = f.inputs[i]._vc if mask & 1 else None
        if vc is not None:  # None: never written nor viewed, so unchanged
            at = f.saved_at
            noted = next((at[k + 1] for k in range(0, len(at), 2) if at[k] == i), 0)
            if vc[0] != noted:
                _changed(f, f"input {i} (shape {tuple(f.inputs[i].shape)})", vc[0], noted)
        mask >>= 1
        i += 1
    for vc in f.saved_outputs:
        if vc[0] != 0:
            _changed(f, "an output", vc[0], 0)


def _changed(f: Function, what: str, now: int, then: int) -> None:
    raise RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: {what} of {f.name} is at version {now}; expected version "
        f"{then} instead. Use the out-of-place op (x = x + y, not x += y), or .clone() the "
        f"tensor before changing it"
    )
