"""Position encodings for attention, which by itself treats a sequence as a set."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.nn import init
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


@register_layer("PositionalEncoding")
class PositionalEncoding(Layer):
    """Adds each position's vector to the features there, so attention (which treats its
    input as a set) can tell positions apart: the fixed sinusoids of Vaswani et al. (2017),
    or a learned table (`learned: true`, as GPT-2).

    Args:
        embedding_dim: size of each position's features.
        max_len: the longest sequence it takes.
        learned: learn `weight` (max_len, embedding_dim), drawn from N(0, 0.02^2), instead
            of the sinusoids (which are not saved: they are the same for every model).
        batch_first: input (B, T, E); False (the default, as PyTorch's) takes (T, B, E).

    Examples:
        >>> pos = nn.PositionalEncoding(64, max_len=128, batch_first=True)
        >>> pos(lm.tensor(np.zeros((8, 20, 64), np.float32))).shape
        (8, 20, 64)
    """

    def __init__(self, embedding_dim: int, max_len: int = 512, learned: bool = False,
                 batch_first: bool = False) -> None:
        super().__init__()
        if embedding_dim < 1 or max_len < 1:
            raise ValueError(f"PositionalEncoding: embedding_dim and max_len must be >= 1; got "
                             f"{embedding_dim} and {max_len}")
        self.embedding_dim, self.max_len = embedding_dim, max_len
        self.learned, self.batch_first = learned, batch_first
        table = np.zeros((max_len, embedding_dim), np.float32)
        if learned:
            self.weight = Parameter(table)
            init.normal_(self.weight, 0.0, 0.02)
        else:
            self.table = sinusoids(max_len, embedding_dim)

    def forward(self, x: Tensor) -> Tensor:
        time = 1 if self.batch_first else 0
        if x.ndim != 3 or x.shape[-1] != self.embedding_dim or x.shape[time] > self.max_len:
            layout = "(B, T, E)" if self.batch_first else "(T, B, E)"
            raise ShapeError(f"PositionalEncoding: expected input {layout} with E = "
                             f"{self.embedding_dim} and T <= max_len = {self.max_len}; got "
                             f"{tuple(x.shape)}")
        length = x.shape[time]
        table = self.weight[:length] if self.learned else self.table[:length]
        if not self.batch_first:  # (T, E) -> (T, 1, E), to broadcast over the batch
            table = (F.reshape(table, (length, 1, self.embedding_dim)) if self.learned
                     else table[:, None])
        return x + table

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if len(shape) != 3:
            return None
        if shape[-1] != self.embedding_dim:
            return f"embedding_dim={shape[-1]}"
        length = shape[1 if self.batch_first else 0]
        return f"max_len={length}" if length > self.max_len else None

    def get_config(self) -> dict[str, Any]:
        return {"embedding_dim": self.embedding_dim, "max_len": self.max_len,
                "learned": self.learned, "batch_first": self.batch_first}


def sinusoids(length: int, dim: int) -> np.ndarray:
    """(length, dim): sin(pos / 10000^(2i/dim)) in even columns, cos in odd ones."""
    pos = np.arange(length, dtype=np.float64)[:, None]
    rates = np.exp(np.arange(0, dim, 2) * (-np.log(10000.0) / dim))
    table = np.zeros((length, dim))
    table[:, 0::2] = np.sin(pos * rates)
    table[:, 1::2] = np.cos(pos * rates[:dim // 2])
    return table.astype(np.float32)
