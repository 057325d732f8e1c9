"""Flatten layer."""

from __future__ import annotations

from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer


@register_layer("Flatten")
class Flatten(Layer):
    """Merge axes start_dim..end_dim: (N, C, H, W) -> (N, C*H*W) by default."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return F.flatten(x, self.start_dim, self.end_dim)

    def get_config(self) -> dict[str, Any]:
        return {"start_dim": self.start_dim, "end_dim": self.end_dim}
