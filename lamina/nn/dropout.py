"""Dropout layer."""

from __future__ import annotations

from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer


@register_layer("Dropout")
class Dropout(Layer):
    """Zero elements with probability p while training (scaling the rest by 1/(1-p)).

    In eval mode it returns its input unchanged.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1]; got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training)

    def get_config(self) -> dict[str, Any]:
        return {"p": self.p}
