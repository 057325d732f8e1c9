"""NAdam and RAdam: Adam with Nesterov momentum, and Adam with its early variance
rectified (PyTorch's rules, decoupled weight decay as an option)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina.optim.adam import moments
from lamina.optim.optimizer import Optimizer, torch_flags


class _AdamFamily(Optimizer):
    elementwise = True

    def _flags(self, lr: float, betas: Any, eps: float, weight_decay: float,
               decoupled_weight_decay: bool, maximize: bool, foreach: Any, capturable: bool,
               differentiable: bool, **extra: Any) -> dict[str, Any]:
        return dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, **extra,
                    decoupled_weight_decay=decoupled_weight_decay,
                    **torch_flags(maximize, foreach, differentiable, capturable=capturable))


class NAdam(_AdamFamily):
    """NAdam (Dozat, 2016): Adam with Nesterov momentum, its momentum warmed up by
    mu_t = b1 * (1 - 0.5 * 0.96^(t * momentum_decay)).

    Examples:
        >>> opt = optim.NAdam(model.parameters(), lr=2e-3)
    """

    def __init__(self, params: Iterable[Any], lr: float = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        super().__init__(params, self._flags(lr, betas, eps, weight_decay,
                                             decoupled_weight_decay, maximize, foreach,
                                             capturable, differentiable,
                                             momentum_decay=momentum_decay))

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        return {"step": 0, "mu_product": 1.0, "exp_avg": np.zeros_like(param),
                "exp_avg_sq": np.zeros_like(param)}

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        grad, m, v = moments(param, grad, state, group)
        lr, (b1, b2), t = group["lr"], group["betas"], state["step"]
        decay = group["momentum_decay"]
        mu = b1 * (1 - 0.5 * 0.96 ** (t * decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * decay))
        state["mu_product"] *= mu
        product = state["mu_product"]
        denom = np.sqrt(v / (1 - b2**t)) + group["eps"]
        param -= lr * (1 - mu) / (1 - product) * grad / denom
        param -= lr * mu_next / (1 - product * mu_next) * m / denom


class RAdam(_AdamFamily):
    """RAdam (Liu et al., 2020): Adam whose adaptive step is switched on, and scaled by a
    rectification term, only once the variance of its estimate is bounded (rho_t > 5);
    before that, plain momentum SGD.

    Examples:
        >>> opt = optim.RAdam(model.parameters(), lr=1e-3)
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        super().__init__(params, self._flags(lr, betas, eps, weight_decay,
                                             decoupled_weight_decay, maximize, foreach,
                                             capturable, differentiable))

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        return {"step": 0, "exp_avg": np.zeros_like(param), "exp_avg_sq": np.zeros_like(param)}

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        _, m, v = moments(param, grad, state, group)
        lr, (b1, b2), t = group["lr"], group["betas"], state["step"]
        corrected = m / (1 - b1**t)
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * t * b2**t / (1 - b2**t)
        if rho_t <= 5:
            param -= lr * corrected
            return
        rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                         / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        adaptive = math.sqrt(1 - b2**t) / (np.sqrt(v) + group["eps"])
        param -= corrected * lr * adaptive * rect
