"""Distances between pairs of rows as layers: CosineSimilarity and PairwiseDistance."""

from __future__ import annotations

from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer


@register_layer("CosineSimilarity")
class CosineSimilarity(Layer):
    """x1 . x2 / max(||x1|| ||x2||, eps) along `dim`.

    Examples:
        >>> nn.CosineSimilarity()(lm.ones(2, 3), lm.ones(2, 3)).tolist()
        [1.0, 1.0]
    """

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)

    def extra_repr(self) -> str:
        return ""  # as PyTorch's

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim, "eps": self.eps}


@register_layer("PairwiseDistance")
class PairwiseDistance(Layer):
    """||x1 - x2 + eps||_p over the last axis, per row.

    Examples:
        >>> nn.PairwiseDistance()(lm.zeros(2, 3), lm.ones(2, 3)).shape
        lamina.Size([2])
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)

    def extra_repr(self) -> str:
        return ""  # as PyTorch's

    def get_config(self) -> dict[str, Any]:
        return {"p": self.norm, "eps": self.eps, "keepdim": self.keepdim}
