"""Where backward's gradients go: into a leaf's `.grad` (added, and owned by the leaf),
through the hooks on tensors and leaves, or into autograd.grad's captures."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lamina.autograd.tensor import Tensor

if TYPE_CHECKING:
    from lamina.autograd.function import Function


def deliver(x: Tensor, gx: Any, given: set[int], only: set[Any] | None,
             found: dict[Any, Any] | None) -> None:
    """Hand a leaf its gradient: through its hooks, then into .grad (or `found`)."""
    if x._extra is not None and x._extra.get("hooks"):
        gx = apply_hooks(x._extra["hooks"], gx)
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


def apply_hooks(hooks: list[Any], g: Any) -> Any:
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


def run_output_hooks(f: Function, gys: list[Any]) -> None:
    """Hooks registered on f's outputs (register_hook, retain_grad) see their gradients."""
    for i, hooks in f.tensor_hooks.items():
        if gys[i] is not None and hooks:
            gys[i] = apply_hooks(hooks, gys[i])


def capture_outputs(f: Function, gys: list[Any], only: set[Any], found: dict[Any, Any]
                     ) -> None:
    """autograd.grad: keep the gradients of the asked-for outputs of f, summed over the
    outputs differentiated (one walk each)."""
    for i, gy in enumerate(gys):
        if (f, i) in only and gy is not None:
            prev = found.get((f, i))
            found[(f, i)] = gy if prev is None else prev + gy


def post_hooked(x: Tensor, only: set[Any] | None, found: dict[Any, Any] | None) -> bool:
    """Whether leaf x has post-accumulate hooks and this backward wrote its .grad."""
    return (x._extra is not None and "post_accumulate_hooks" in x._extra and found is None
            and (only is None or id(x) in only))


def after_accumulating(leaves: list[Tensor]) -> None:
    """Each leaf's post-accumulate hooks, once per backward, its gradient complete (the
    sum over every path to it), as PyTorch calls them."""
    for x in leaves:
        for hook in list(x._extra["post_accumulate_hooks"]):
            hook(x)
