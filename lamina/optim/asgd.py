"""Averaged SGD (Polyak & Juditsky, 1992), PyTorch's rule: SGD with a decaying step, and a
running average of the iterates (`ax` in the state) to evaluate with."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina.optim.optimizer import Optimizer, torch_flags


class ASGD(Optimizer):
    """Averaged SGD.

        g = grad + weight_decay * p
        p = p * (1 - lambd * eta) - eta * g
        ax = p if mu == 1 else ax + mu * (p - ax)
        eta = lr / (1 + lambd * lr * t) ** alpha;   mu = 1 / max(1, t - t0)

    Examples:
        >>> opt = optim.ASGD(model.parameters(), lr=0.01, t0=100)
    """

    elementwise = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0,
                                      weight_decay=weight_decay,
                                      **torch_flags(maximize, foreach, differentiable,
                                                    capturable=capturable)))

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        return {"step": 0, "eta": group["lr"], "mu": 1.0, "ax": np.zeros_like(param)}

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        lr, lambd, wd = group["lr"], group["lambd"], group["weight_decay"]
        if wd:
            grad = grad + wd * param
        state["step"] += 1
        t, eta = state["step"], state["eta"]
        param *= 1 - lambd * eta
        param -= eta * grad
        ax = state["ax"]
        if state["mu"] != 1:
            ax += (param - ax) * state["mu"]
        else:
            ax[...] = param
        state["eta"] = lr / (1 + lambd * lr * t) ** group["alpha"]
        state["mu"] = 1 / max(1, t - group["t0"])
