"""Embedding lookup table."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn import init
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


@register_layer("Embedding")
class Embedding(Layer):
    """A table of `num_embeddings` vectors of size `embedding_dim`, looked up by integer id.

    Shapes: ids (*) integers in [0, num_embeddings) -> (*, embedding_dim); weight
    (num_embeddings, embedding_dim) drawn from N(0, 1) as in PyTorch.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(np.empty((num_embeddings, embedding_dim), np.float32))
        init.normal_(self.weight)

    def forward(self, ids: Any) -> Tensor:
        return F.embedding(ids, self.weight)

    def get_config(self) -> dict[str, Any]:
        return {"num_embeddings": self.num_embeddings, "embedding_dim": self.embedding_dim}
