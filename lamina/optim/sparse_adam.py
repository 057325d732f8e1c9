"""SparseAdam: PyTorch's lazy Adam for embedding tables."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina.optim.optimizer import Optimizer, require


class SparseAdam(Optimizer):
    """Adam on the rows a step's gradient touches only, as PyTorch's SparseAdam: the
    other rows keep their weights and moments, where Adam would decay the moments and
    move every row. A row is touched where its gradient is nonzero somewhere (lamina's
    embedding gradients, `sparse=True` or not, are dense arrays; PyTorch's sparse ones
    list the rows looked up, which differs only for a row whose gradient sums to exactly
    zero).

        for touched rows r:  m_r = b1 m_r + (1 - b1) g_r;  v_r = b2 v_r + (1 - b2) g_r^2
                             p_r = p_r - lr sqrt(1 - b2^t) / (1 - b1^t) m_r / (sqrt(v_r) + eps)

    Examples:
        >>> table = nn.Embedding(100, 8, sparse=True)
        >>> opt = optim.SparseAdam(table.parameters(), lr=0.01)
        >>> table(lm.tensor([3, 7, 3])).sum().backward(); opt.step()
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 maximize: bool = False) -> None:
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, maximize=maximize))

    def check_hyper(self, group: dict[str, Any]) -> None:
        super().check_hyper(group)
        require(group, "eps", group.get("eps", 1) > 0, "must be > 0")

    def init_state(self, param: Any, group: dict[str, Any]) -> dict[str, Any]:
        return {"step": 0, "exp_avg": np.zeros_like(param), "exp_avg_sq": np.zeros_like(param)}

    def update_param(self, param: Any, grad: Any, state: dict[str, Any],
                     group: dict[str, Any]) -> None:
        (b1, b2), eps = group["betas"], group["eps"]
        state["step"] += 1
        t = state["step"]
        flat = grad.reshape(len(grad), -1) if grad.ndim else grad.reshape(1, 1)
        rows = np.flatnonzero(flat.any(axis=1))
        if grad.ndim == 0 or len(rows) == 0:
            return
        g, m, v = grad[rows], state["exp_avg"][rows], state["exp_avg_sq"][rows]
        m += (1 - b1) * (g - m)
        v += (1 - b2) * (g * g - v)
        state["exp_avg"][rows], state["exp_avg_sq"][rows] = m, v
        step_size = group["lr"] * math.sqrt(1 - b2**t) / (1 - b1**t)
        param[rows] -= step_size * m / (np.sqrt(v) + eps)
