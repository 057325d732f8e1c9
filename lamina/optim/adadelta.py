"""Adadelta and Adamax: per-coordinate step sizes without a global schedule (PyTorch's
rules)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina.optim.optimizer import Optimizer, require, torch_flags


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012): steps scaled by the ratio of running RMS of updates and
    of gradients.

        g = grad + weight_decay * p
        v = rho * v + (1 - rho) * g^2
        delta = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * delta^2
        p = p - lr * delta

    Examples:
        >>> opt = optim.Adadelta(model.parameters(), lr=1.0)
    """

    elementwise = True

    def __init__(self, params: Iterable[Any], lr: float = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      **torch_flags(maximize, foreach, differentiable,
                                                    capturable=capturable)))

    def check_hyper(self, group: dict[str, Any]) -> None:
        super().check_hyper(group)
        require(group, "rho", 0 <= group["rho"] <= 1, "must be in [0, 1]")

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        return {"step": 0, "square_avg": np.zeros_like(param), "acc_delta": np.zeros_like(param)}

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
        if wd:
            grad = grad + wd * param
        state["step"] += 1
        v, u = state["square_avg"], state["acc_delta"]
        v *= rho
        v += (1 - rho) * grad * grad
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * grad
        u *= rho
        u += (1 - rho) * delta * delta
        param -= group["lr"] * delta


class Adamax(Optimizer):
    """Adamax (Kingma & Ba, 2015): Adam with the infinity norm in place of the second
    moment.

        g = grad + weight_decay * p
        m = b1 * m + (1 - b1) * g;   u = max(b2 * u, |g| + eps)
        p = p - lr / (1 - b1^t) * m / u

    Examples:
        >>> opt = optim.Adamax(model.parameters(), lr=2e-3)
    """

    elementwise = True

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      **torch_flags(maximize, foreach, differentiable,
                                                    capturable=capturable)))

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        return {"step": 0, "exp_avg": np.zeros_like(param), "exp_inf": np.zeros_like(param)}

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        (b1, b2), wd = group["betas"], group["weight_decay"]
        if wd:
            grad = grad + wd * param
        state["step"] += 1
        m, u = state["exp_avg"], state["exp_inf"]
        m += (1 - b1) * (grad - m)
        u *= b2
        np.maximum(u, np.abs(grad) + group["eps"], out=u)
        param -= group["lr"] / (1 - b1 ** state["step"]) * m / u
