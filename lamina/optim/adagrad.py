"""Adagrad (PyTorch's rule, with learning-rate decay)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina.optim.optimizer import Optimizer, require, torch_flags


class Adagrad(Optimizer):
    """Adagrad (Duchi et al., 2011).

        g = grad + weight_decay * p
        s = s + g^2
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)
    """

    elementwise = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      **torch_flags(maximize, foreach, differentiable,
                                                    fused=fused)))

    def check_hyper(self, group: dict[str, Any]) -> None:
        super().check_hyper(group)
        require(group, "lr_decay", group["lr_decay"] >= 0, "must be >= 0")
        require(group, "initial_accumulator_value", group["initial_accumulator_value"] >= 0,
                "must be >= 0")

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        return {"step": 0,
                "sum": np.full_like(param, group["initial_accumulator_value"])}

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * param
        state["step"] += 1
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] += grad * grad
        param -= clr * grad / (np.sqrt(state["sum"]) + group["eps"])
