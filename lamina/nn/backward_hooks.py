"""A module's backward hooks (register_full_backward_hook, register_full_backward_pre_hook):
called with the gradients with respect to its inputs and outputs, as PyTorch calls them.

The module's call puts an identity op on its tensor inputs and one on its outputs. The
outputs' op sees the gradients of the outputs first (the pre-hooks may replace them); the
inputs' op then sees the gradients of the inputs and calls the hooks (which may replace
those). Where no input needs a gradient, the hooks are called from the outputs' op with
None for every input, as PyTorch's are.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from lamina.autograd.custom import Function
from lamina.autograd.grad_mode import is_grad_enabled
from lamina.autograd.tensor import Tensor


class _Call:
    """One call of a hooked module: what its two identity ops share."""

    def __init__(self, module: Any, n_inputs: int, positions: list[int]) -> None:
        self.module, self.n_inputs, self.positions = module, n_inputs, positions
        self.grad_outputs: tuple[Any, ...] = ()

    def hooks(self, table: str) -> list[Any]:
        return list(self.module.__dict__.get(table, {}).values())

    def call_hooks(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        """The full hooks on (grad_input, grad_output); the grads they return replace
        those of the inputs."""
        full = [None] * self.n_inputs
        for slot, g in zip(self.positions, grads):
            full[slot] = g
        grad_input = tuple(full)
        for hook in self.hooks("_backward_hooks"):
            changed = hook(self.module, grad_input, self.grad_outputs)
            if changed is not None:
                grad_input = tuple(changed)
        return tuple(grad_input[slot] for slot in self.positions)


class _Marker(Function):
    """The identity on a hooked call's tensors; its backward is where the hooks run."""

    @staticmethod
    def forward(ctx: Any, call: _Call, *xs: Tensor) -> Any:
        ctx.call = call
        return xs[0].detach() if len(xs) == 1 else tuple(x.detach() for x in xs)


class _Inputs(_Marker):
    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        return (None, *ctx.call.call_hooks(grads))


class _Outputs(_Marker):
    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        call = ctx.call
        for hook in call.hooks("_backward_pre_hooks"):
            changed = hook(call.module, grads)
            if changed is not None:
                grads = tuple(changed)
        call.grad_outputs = grads
        if not call.positions and call.hooks("_backward_hooks"):
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients "
                          "(as PyTorch warns).", UserWarning, stacklevel=2)
            call.call_hooks(())  # no input needs a gradient: the hooks are called here
        return (None, *grads)


def call_with_backward_hooks(module: Any, forward: Any, args: tuple[Any, ...],
                             kwargs: dict[str, Any]) -> Any:
    """forward(*args, **kwargs) with the identity ops around it (when grad mode records)."""
    if not is_grad_enabled():
        return forward(*args, **kwargs)
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    call = _Call(module, len(args), positions)
    if positions:
        marked = _Inputs.apply(call, *[args[i] for i in positions])
        marked = (marked,) if isinstance(marked, Tensor) else marked
        args = tuple(marked[positions.index(i)] if i in positions else a
                     for i, a in enumerate(args))
    out = forward(*args, **kwargs)
    single = isinstance(out, Tensor)
    outs = (out,) if single else tuple(out) if isinstance(out, (tuple, list)) else ()
    graded = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
    if not graded:
        return out
    marked = _Outputs.apply(call, *[outs[k] for k in graded])
    marked = (marked,) if isinstance(marked, Tensor) else marked
    new = [marked[graded.index(k)] if k in graded else o for k, o in enumerate(outs)]
    return new[0] if single else type(out)(new)


class BackwardHookMethods:
    """Layer's methods that register the hooks above (their handles are module_tree's)."""

    __slots__ = ()

    def register_full_backward_hook(self, hook: Callable[..., Any],
                                    prepend: bool = False) -> Any:
        """Call `hook(module, grad_input, grad_output)` when the gradients with respect to
        the module's positional inputs are computed (None for those that need none); a
        returned tuple replaces grad_input (Grad-CAM's hook, as in PyTorch).

        Examples:
            >>> layer, seen = nn.Linear(2, 1), []
            >>> h = layer.register_full_backward_hook(
            ...     lambda m, gin, gout: seen.append(gout[0].shape))
            >>> layer(lm.ones(3, 2)).sum().backward(); seen
            [lamina.Size([3, 1])]
        """
        return self._hook("_backward_hooks", hook, prepend)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any],
                                        prepend: bool = False) -> Any:
        """Call `hook(module, grad_output)` when the gradients of the module's outputs are
        computed, before those of its inputs; a returned tuple replaces grad_output.

        Examples:
            >>> layer = nn.Linear(2, 1)
            >>> h = layer.register_full_backward_pre_hook(lambda m, gout: (gout[0] * 0,))
            >>> layer(lm.ones(3, 2)).sum().backward(); layer.weight.grad.abs().sum().item()
            0.0
        """
        return self._hook("_backward_pre_hooks", hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> Any:
        """PyTorch's deprecated hook: here the full backward hook (whose grad_input is the
        inputs' gradients, which the old hook got wrong on modules of several ops).

        Examples:
            >>> h = nn.Linear(2, 1).register_backward_hook(lambda m, gin, gout: None)
        """
        return self._hook("_backward_hooks", hook)

