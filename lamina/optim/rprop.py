"""Rprop (Riedmiller & Braun, 1993), PyTorch's rule: each coordinate moves by its own step
size, grown while its gradient keeps its sign and shrunk when the sign flips."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina.optim.optimizer import Optimizer, require, torch_flags


class Rprop(Optimizer):
    """Resilient backpropagation: only the gradient's sign is used.

        s = step * etaplus where g * g_prev > 0, step * etaminus where < 0, clipped to
            step_sizes; after a sign flip the gradient counts as 0 (no move, no flip next)
        p = p - sign(g) * s

    Examples:
        >>> opt = optim.Rprop(model.parameters(), lr=0.01)
    """

    elementwise = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-2,
                 etas: tuple[float, float] = (0.5, 1.2),
                 step_sizes: tuple[float, float] = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes),
                                      **torch_flags(maximize, foreach, differentiable,
                                                    capturable=capturable)))

    def check_hyper(self, group: dict[str, Any]) -> None:
        super().check_hyper(group)
        minus, plus = group["etas"]
        require(group, "etas", 0 < minus < 1 < plus, "need 0 < etaminus < 1 < etaplus")

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        return {"step": 0, "prev": np.zeros_like(param),
                "step_size": np.full_like(param, group["lr"])}

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        (minus, plus), (low, high) = group["etas"], group["step_sizes"]
        state["step"] += 1
        sign = np.sign(grad * state["prev"])
        factor = np.where(sign > 0, plus, np.where(sign < 0, minus, 1.0)).astype(param.dtype)
        size = state["step_size"]
        np.clip(size * factor, low, high, out=size)
        grad = np.where(sign < 0, 0, grad)
        param -= np.sign(grad) * size
        state["prev"][...] = grad
