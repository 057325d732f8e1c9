"""The p-norm for p other than 2 and the infinities, with PyTorch's gradient: defined as 0
where the norm is 0 (a zero row of a pdist, a zero vector), where the chain rule through
(sum |x|^p)^(1/p) would give 0 * inf; and p = 0, the count of non-zeros, whose gradient is
0."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.functions.reduction import expand_reduced


class PNorm(Function):
    def __init__(self, p: float, axes: tuple[int, ...], keepdims: bool) -> None:
        self.p, self.axes, self.keepdims = float(p), axes, keepdims

    def forward(self, x: Any) -> Any:
        a = np.abs(x)
        if self.p == 0:
            y = (a != 0).sum(axis=self.axes, keepdims=True).astype(x.dtype)
        else:
            y = (a ** self.p).sum(axis=self.axes, keepdims=True) ** (1 / self.p)
        self.save_for_backward(x, y)
        return y if self.keepdims else np.squeeze(y, self.axes)

    def backward(self, gy: Any) -> Any:
        x, y = self.saved_tensors
        if self.p == 0:
            return np.zeros_like(x)
        gy = expand_reduced(gy, x.shape, self.axes, self.keepdims)
        p, a = self.p, np.abs(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            if p < 1:  # |x|^(p-1) is infinite at 0: there the gradient is 0
                scaled = np.where(x == 0, 0, np.sign(x) * a ** (p - 1))
                g = scaled * gy * y ** (1 - p)
            else:
                scale = np.where(y == 0, 0, gy / y ** (p - 1))
                g = np.sign(x) * a ** (p - 1) * scale
        return g.astype(x.dtype, copy=False)
