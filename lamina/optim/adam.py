"""Adam and AdamW (PyTorch's rules, with AMSGrad as an option)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina import fused
from lamina.optim.optimizer import Optimizer, torch_flags


def _load_kernels() -> None:
    """numba's kernels loaded when an Adam is made, not at its first update: the first
    step's forward would run the ops that use numba only once loaded (log-softmax) on
    NumPy's code, a resumed run's first step again, and an uninterrupted run's not."""
    fused.compiled()


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015) with L2 weight decay added to the gradient (or, with
    `decoupled_weight_decay`, applied to the weights first, as AdamW).

        g = grad + weight_decay * p
        m = b1 * m + (1 - b1) * g;   v = b2 * v + (1 - b2) * g^2
        v_hat = max(v_hat, v) if amsgrad else v
        p = p - lr / (1 - b1^t) * m / (sqrt(v_hat) / sqrt(1 - b2^t) + eps)
    """

    elementwise = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      **torch_flags(maximize, foreach, differentiable,
                                                    capturable=capturable, fused=fused),
                                      decoupled_weight_decay=decoupled_weight_decay))
        _load_kernels()

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        state = {"step": 0, "exp_avg": np.zeros_like(param), "exp_avg_sq": np.zeros_like(param)}
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = np.zeros_like(param)
        return state

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        lr, (b1, b2) = group["lr"], group["betas"]
        compiled = fused.compiled()
        if compiled is not None and not group["amsgrad"] and fused.fits(
                param, grad, state["exp_avg"], state["exp_avg_sq"]):
            _fused_step(compiled.adam, param, grad, state, group)
            return
        _, m, v = moments(param, grad, state, group)
        t = state["step"]
        if group["amsgrad"]:
            np.maximum(state["max_exp_avg_sq"], v, out=state["max_exp_avg_sq"])
            v = state["max_exp_avg_sq"]
        denom = np.sqrt(v) / math.sqrt(1 - b2**t) + group["eps"]
        param -= (lr / (1 - b1**t)) * m / denom


def moments(param: Any, grad: Any, state: dict[str, Any], group: dict[str, Any]
            ) -> tuple[Any, Any, Any]:
    """The step every Adam-like rule starts with: weight decay (into the gradient, or
    decoupled onto the weights), the step count, both moments updated in place. Returns
    (the gradient with its decay, m, v)."""
    lr, (b1, b2), wd = group["lr"], group["betas"], group["weight_decay"]
    if wd and group["decoupled_weight_decay"]:
        param *= 1 - lr * wd
    elif wd:
        grad = grad + wd * param
    state["step"] += 1
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m += (1 - b1) * (grad - m)  # torch's lerp form of b1 * m + (1 - b1) * g
    v *= b2
    v += (1 - b2) * grad * grad
    return grad, m, v


def _fused_step(kernel: Any, param: Any, grad: Any, state: dict[str, Any],
                group: dict[str, Any]) -> None:
    """Adam's update as one pass (lamina.fused) instead of ten; the same formula as
    `moments` and `Adam.update_param`, its scalars in float32 as NumPy's would be."""
    lr, (b1, b2), wd = group["lr"], group["betas"], group["weight_decay"]
    decoupled = bool(wd and group["decoupled_weight_decay"])
    state["step"] += 1
    t, f = state["step"], np.float32
    # In shares over the threads: a GPT's embedding and widest layers are millions of
    # elements, each read and written in four arrays.
    fused.in_pieces(kernel, param, grad, state["exp_avg"], state["exp_avg_sq"], f(1 - b1),
                    f(b2), f(1 - b2), f(lr / (1 - b1**t)), f(math.sqrt(1 - b2**t)),
                    f(group["eps"]), f(1 - lr * wd if decoupled else 1),
                    f(0 if decoupled else wd))


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019): p *= 1 - lr * wd first."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
