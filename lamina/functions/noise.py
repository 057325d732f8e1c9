"""Ops that draw random numbers: dropout."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import config
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor


class Dropout(Function):
    supports_out = True
    draws_random = True
    draws: Any = None  # numbers drawn ahead for this call (a split plan's slice of a batch)

    def __init__(self, p: float) -> None:
        self.p = p

    @staticmethod
    def draw(shape: tuple[int, ...]) -> Any:
        # In float32 whatever x's dtype, so one seed gives one mask in every precision.
        return config.rng().random(shape, dtype="float32")

    def forward(self, x: Any) -> Any:
        keep = (self.draw(x.shape) if self.draws is None else self.draws) >= self.p
        # Inverted dropout: scale the kept units at training time so eval is the identity.
        scale = 0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p)
        self.mask = keep.astype(x.dtype) * x.dtype.type(scale)
        return np.multiply(x, self.mask, out=self.out_buffer())

    def backward(self, gy: Any) -> Any:
        return gy * self.mask


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p).

    Draws from lamina's generator, so `lm.manual_seed` makes the mask repeat.

    Args:
        x: input of any shape.
        p: drop probability in [0, 1].
        training: when False, returns x unchanged.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1]; got {p}")
    if not training or p == 0.0:
        return x
    return Dropout(p).apply(x)
