"""The updater: the seam between learning and where parameters live.

An algorithm talks to parameters only through `pull()`, `push(name, grad)` and `step()`.
`LocalUpdater` applies the optimizer in this process; a parameter-server client
implements the same three calls, so every algorithm runs distributed unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina.autograd.engine import backward_stream
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer, Parameter


class LocalUpdater:
    """Applies an optimizer to the model's own parameters.

    Args:
        model: the layer whose named parameters receive the pushed gradients.
        optimizer: updates them on `step()`.
        before_step: hooks called with the parameters between the last push and the
            update (gradient clipping, the non-finite-gradient guard).
    """

    def __init__(self, model: Layer, optimizer: Any,
                 before_step: Sequence[Callable[[list[Parameter]], None]] = ()) -> None:
        self.model, self.optimizer = model, optimizer
        self.before_step = list(before_step)
        self.params = dict(model.named_parameters())

    def pull(self) -> None:
        """Fetch current parameters: here they are the model's own, so nothing to do."""

    def push(self, name: str, grad: Any) -> None:
        """Hand in the gradient of one parameter, by its dotted name."""
        p = self.params[name]
        if p.grad is None:
            p.grad = grad
        elif p.grad.array is not grad:
            p.grad = p.grad.array + grad

    def step(self) -> None:
        """Apply the optimizer to the pushed gradients, then clear them."""
        params = list(self.params.values())
        for hook in self.before_step:
            hook(params)
        self.optimizer.step()
        self.optimizer.zero_grad()


def push_gradients(loss: Tensor, model: Layer, updater: Any) -> None:
    """Backward from `loss`, pushing each parameter's gradient as soon as it is final.

    The stream lets a remote updater send early layers' gradients while backward is still
    computing the rest.
    """
    names = {id(p): n for n, p in model.named_parameters()}
    for leaf in backward_stream(loss):
        name = names.get(id(leaf))
        if name is not None:
            updater.push(name, leaf.grad.array)
