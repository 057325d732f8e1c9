"""RMSprop (PyTorch's rule: centered and momentum variants)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina.optim.optimizer import Optimizer, require, torch_flags


class RMSprop(Optimizer):
    """RMSprop (Hinton's lecture 6e), as PyTorch implements it.

        g = grad + weight_decay * p
        s = alpha * s + (1 - alpha) * g^2
        a = alpha * a + (1 - alpha) * g;  d = sqrt(s - a^2) + eps   (centered)
        d = sqrt(s) + eps                                           (otherwise)
        b = momentum * b + g / d;  p = p - lr * b                   (momentum > 0)
        p = p - lr * g / d                                          (otherwise)
    """

    elementwise = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      **torch_flags(maximize, foreach, differentiable,
                                                    capturable=capturable)))

    def check_hyper(self, group: dict[str, Any]) -> None:
        super().check_hyper(group)
        require(group, "alpha", 0 <= group["alpha"] <= 1, "must be in [0, 1]")
        require(group, "momentum", group["momentum"] >= 0, "must be >= 0")

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        state = {"step": 0, "square_avg": np.zeros_like(param)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = np.zeros_like(param)
        if group["centered"]:
            state["grad_avg"] = np.zeros_like(param)
        return state

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        alpha = group["alpha"]
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        state["step"] += 1
        sq = state["square_avg"]
        sq *= alpha
        sq += (1 - alpha) * grad * grad
        if group["centered"]:
            ga = state["grad_avg"]
            ga += (1 - alpha) * (grad - ga)
            denom = np.sqrt(sq - ga * ga) + group["eps"]
        else:
            denom = np.sqrt(sq) + group["eps"]
        if group["momentum"] > 0:
            buf = state["momentum_buffer"]
            buf *= group["momentum"]
            buf += grad / denom
            param -= group["lr"] * buf
        else:
            param -= group["lr"] * grad / denom
