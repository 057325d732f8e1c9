"""`lamina.utils.checkpoint` (torch.utils.checkpoint): activation checkpointing. The
wrapped function runs without keeping its intermediate tensors; backward runs it again,
from the same random state, and backpropagates through that second run. Memory for
compute, as in PyTorch: a deep model's activations are kept only at the checkpoints.

Backward reaches the parameters the function uses through `.grad`, as PyTorch's
reentrant checkpoint does (so `autograd.grad` over a checkpoint does not see them). Under
an execution plan, which plans its own memory, the function simply runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina import state
from lamina.autograd.custom import Function
from lamina.autograd.engine import backward
from lamina.autograd.grad_mode import enable_grad
from lamina.autograd.tensor import Tensor
from lamina.random import get_rng_state, set_rng_state


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx: Any, run: Callable[..., Any], preserve_rng: bool, *args: Any) -> Any:
        ctx.run, ctx.args = run, args
        ctx.rng = get_rng_state() if preserve_rng else None
        out = run(*args)
        ctx.single = isinstance(out, Tensor)
        return out

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a
                  for a in ctx.args]
        now = get_rng_state()
        if ctx.rng is not None:
            set_rng_state(ctx.rng)
        try:
            with enable_grad():
                out = ctx.run(*inputs)
        finally:
            set_rng_state(now)
        outs = (out,) if ctx.single else tuple(out)
        pairs = [(o, g) for o, g in zip(outs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if pairs:  # one backward for every output: the sum of their products with the grads
            backward(sum((o * g.detach()).sum() for o, g in pairs))
        return (None, None, *[a.grad if isinstance(a, Tensor) and a.requires_grad else None
                              for a in inputs])


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """function(*args), its intermediate tensors dropped, recomputed in backward.

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
    return _Checkpoint.apply(function, preserve_rng_state, *args)


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
