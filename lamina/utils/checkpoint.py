"""`lamina.utils.checkpoint` (torch.utils.checkpoint): activation checkpointing. The
wrapped function runs without keeping its intermediate tensors; backward runs it again,
from the same random state, and backpropagates through that second run. Memory for
compute, as in PyTorch: a deep model's activations are kept only at the checkpoints.

PyTorch's two variants. `use_reentrant=False` (the one PyTorch recommends): the
parameters the function reads are inputs of the checkpoint's node, found by walking the
graph of its first run, so `autograd.grad` reaches them, and a gradient taken with
`create_graph=True` (a gradient penalty) can be differentiated again. `use_reentrant=True`
(PyTorch's default, when it is not given): backward reaches those parameters through
their `.grad` only, so `autograd.grad` over the checkpoint does not see them. Under an
execution plan, which plans its own memory, the function simply runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina import state
from lamina.autograd.custom import Function
from lamina.autograd.engine import backward, grad
from lamina.autograd.grad_mode import enable_grad
from lamina.autograd.tensor import Tensor
from lamina.random import get_rng_state, set_rng_state


def _rerun(run: Callable[..., Any], rng: Any, args: list[Any]) -> tuple[Any, ...]:
    """run(*args) in grad mode from the random state of the first run (None: as it is
    now), the caller's random state kept; its outputs as a tuple."""
    now = get_rng_state()
    if rng is not None:
        set_rng_state(rng)
    try:
        with enable_grad():
            out = run(*args)
    finally:
        set_rng_state(now)
    return out if isinstance(out, tuple) else (out,)


def _weighted_sum(outs: tuple[Any, ...], grads: tuple[Any, ...], graph: bool) -> Any:
    """sum of (output * its gradient) over the second run's outputs that take one: one
    backward for them all (None where none does). The gradients stay in the graph only
    under create_graph; in grad mode either way, as a plain backward runs in no_grad."""
    pairs = [(o, g) for o, g in zip(outs, grads)
             if isinstance(o, Tensor) and o.requires_grad and g is not None]
    if not pairs:
        return None
    with enable_grad():
        return sum((o * (g if graph else g.detach())).sum() for o, g in pairs)


def _detached(args: Any) -> list[Any]:
    return [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
            for a in args]


class _Reentrant(Function):
    @staticmethod
    def forward(ctx: Any, run: Callable[..., Any], preserve_rng: bool, *args: Any) -> Any:
        ctx.run, ctx.args = run, args
        ctx.rng = get_rng_state() if preserve_rng else None
        return run(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        inputs = _detached(ctx.args)
        total = _weighted_sum(_rerun(ctx.run, ctx.rng, inputs), grads, graph=False)
        if total is not None:
            backward(total)
        return (None, None, *[a.grad if isinstance(a, Tensor) and a.requires_grad else None
                              for a in inputs])


class _Checkpoint(Function):
    """The non-reentrant variant: inputs are the function's arguments, then the leaves
    its first run read (`leaves`); forward hands back that run's outputs, detached."""

    @staticmethod
    def forward(ctx: Any, run: Callable[..., Any], rng: Any, n_args: int, outs: Any,
                *inputs: Any) -> Any:
        ctx.run, ctx.rng, ctx.n_args, ctx.inputs = run, rng, n_args, inputs
        return outs

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        # In grad mode only under create_graph: then the second run reads the arguments
        # themselves, so that the gradients it gives are functions of them.
        graph = state.grad_enabled
        args = list(ctx.inputs[:ctx.n_args])
        rerun_args = args if graph else _detached(args)
        total = _weighted_sum(_rerun(ctx.run, ctx.rng, rerun_args), grads, graph)
        targets = [*rerun_args, *ctx.inputs[ctx.n_args:]]
        wanted = [i for i, t in enumerate(targets) if isinstance(t, Tensor) and t.requires_grad]
        found: list[Any] = [None] * len(targets)
        if total is not None and wanted:
            # retain_graph: a function that reads a tensor made outside it (not an argument)
            # backpropagates through that tensor's ops here; the outer backward reaches
            # them again, for the gradient they get from elsewhere.
            grads_found = grad(total, [targets[i] for i in wanted], retain_graph=True,
                               create_graph=graph, allow_unused=True)
            for i, g in zip(wanted, grads_found):
                found[i] = g
        return (None, None, None, None, *found)


def _leaves(outs: tuple[Any, ...], args: list[Any]) -> list[Tensor]:
    """The leaves that require grad in the graph of `outs` (the parameters a function
    read), in the order first reached, besides `args`."""
    skip = {id(a) for a in args}
    leaves: list[Tensor] = []
    seen: set[int] = set()
    todo = [o.creator for o in outs if isinstance(o, Tensor) and o.creator is not None]
    while todo:
        op = todo.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        for x in vars(op).get("inputs", ()):
            if x.creator is not None:
                todo.append(x.creator)
            elif x.requires_grad and id(x) not in skip:
                skip.add(id(x))
                leaves.append(x)
    return leaves


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """function(*args), its intermediate tensors dropped, recomputed in backward.
    `use_reentrant`: PyTorch's choice of variant (see the module's docstring); None is
    PyTorch's default, True.

    Examples:
        >>> from lamina.utils.checkpoint import checkpoint
        >>> x = lm.ones(2, requires_grad=True)
        >>> checkpoint(lambda t: (t * 3).exp(), x, use_reentrant=False).sum().backward()
        >>> x.grad
        tensor([60.2566, 60.2566])
    """
    if kwargs:
        return checkpoint(lambda *a: function(*a, **kwargs), *args, use_reentrant=use_reentrant,
                          preserve_rng_state=preserve_rng_state)
    if state.tracer is not None or not state.grad_enabled:
        return function(*args)
    if use_reentrant is None or use_reentrant:
        return _Reentrant.apply(function, preserve_rng_state, *args)
    rng = get_rng_state() if preserve_rng_state else None
    inputs = _detached(args)
    out = function(*inputs)  # the first run: its graph is walked for the leaves, then dropped
    outs = out if isinstance(out, tuple) else (out,)
    leaves = _leaves(outs, inputs)
    values = tuple(o.detach() if isinstance(o, Tensor) else o for o in outs)
    values = values if isinstance(out, tuple) else values[0]
    del out, outs, inputs  # with the graph go the first run's activations
    return _Checkpoint.apply(function, rng, len(args), values, *args, *leaves)


def checkpoint_sequential(functions: Any, segments: int, input: Any,  # noqa: A002
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """A Sequential (or list of layers) run in `segments` checkpointed pieces (the last
    one kept as usual, as PyTorch's).

    Examples:
        >>> from lamina.utils.checkpoint import checkpoint_sequential
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
        >>> checkpoint_sequential(net, 2, lm.ones(3, 2), use_reentrant=False).shape
        lamina.Size([3, 1])
    """
    layers: Sequence[Any] = list(functions.children()) if hasattr(functions, "children") \
        else list(functions)
    size = max(1, len(layers) // segments)
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size

        def run(x: Any, piece: Sequence[Any] = layers[start:end]) -> Any:
            for layer in piece:
                x = layer(x)
            return x
        input = checkpoint(run, input, use_reentrant=use_reentrant)  # noqa: A001
    for layer in layers[end:]:
        input = layer(input)  # noqa: A001
    return input


__all__ = ["checkpoint", "checkpoint_sequential"]
