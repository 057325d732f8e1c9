"""Embedding tables: Embedding (a lookup per id) and EmbeddingBag (the sum, mean or max of
each bag of ids), with PyTorch's arguments."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn import init
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


class _Table(Layer):
    """The weight (num_embeddings, embedding_dim), N(0, 1) as PyTorch draws it, with the
    padding row zeroed; or `_weight` as given."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None,
                 max_norm: float | None, norm_type: float, scale_grad_by_freq: bool,
                 sparse: bool, _weight: Any) -> None:
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"{type(self).__name__}: padding_idx must be within "
                                 f"num_embeddings ({num_embeddings}); got {padding_idx}")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(np.empty((num_embeddings, embedding_dim), np.float32))
            init.normal_(self.weight)
            if padding_idx is not None:
                self.weight.array[padding_idx] = 0
        else:
            array = np.asarray(getattr(_weight, "array", _weight))
            if array.shape != (num_embeddings, embedding_dim):
                raise ValueError(f"{type(self).__name__}: _weight must be ({num_embeddings}, "
                                 f"{embedding_dim}); got {tuple(array.shape)}")
            self.weight = Parameter(array.copy())

    # The settings the repr shows where they differ from their defaults, in PyTorch's order
    _shown: tuple[str, ...] = ("padding_idx", "max_norm", "norm_type", "scale_grad_by_freq",
                               "sparse")
    _defaults = {"padding_idx": None, "max_norm": None, "norm_type": 2.0,
                 "scale_grad_by_freq": False, "sparse": False}

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        for key in self._shown:
            value = getattr(self, key)
            if key not in self._defaults:  # always shown, quoted (EmbeddingBag's mode)
                text += f", {key}={value!r}"
            elif value != self._defaults[key]:
                text += f", {key}={value}"
        return text

    def get_config(self) -> dict[str, Any]:
        return {"num_embeddings": self.num_embeddings, "embedding_dim": self.embedding_dim,
                "padding_idx": self.padding_idx, "max_norm": self.max_norm,
                "norm_type": self.norm_type, "scale_grad_by_freq": self.scale_grad_by_freq}

    @classmethod
    def from_pretrained(cls, embeddings: Any, freeze: bool = True, **kwargs: Any) -> Any:
        """A table holding `embeddings` (a 2-D tensor or array), frozen unless `freeze`
        is False.

        Examples:
            >>> nn.Embedding.from_pretrained(lm.eye(3))(lm.tensor([2])).tolist()
            [[0.0, 0.0, 1.0]]
        """
        rows, dim = np.shape(getattr(embeddings, "array", embeddings))
        table = cls(rows, dim, _weight=embeddings, **kwargs)
        table.weight.requires_grad = not freeze
        return table


@register_layer("Embedding")
class Embedding(_Table):
    """A table of `num_embeddings` vectors of size `embedding_dim`, looked up by integer id.

    Shapes: ids (*) integers in [0, num_embeddings) -> (*, embedding_dim); weight
    (num_embeddings, embedding_dim) drawn from N(0, 1) as in PyTorch. `padding_idx`'s
    row starts at zero and takes no gradient; `max_norm` renormalises the rows looked up.

    Examples:
        >>> nn.Embedding(10, 3, padding_idx=0)(lm.tensor([[0, 4]])).shape
        lamina.Size([1, 2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight: Any = None,
                 _freeze: bool = False) -> None:
        super().__init__(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type,
                         scale_grad_by_freq, sparse, _weight)
        if _freeze:
            self.weight.requires_grad = False

    def forward(self, input: Any) -> Tensor:
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq)


@register_layer("EmbeddingBag")
class EmbeddingBag(_Table):
    """The sum, mean or max of the embeddings of each bag of ids: rows of a 2-D input, or
    runs of a 1-D input starting at `offsets` (F.embedding_bag).

    Examples:
        >>> bag = nn.EmbeddingBag(10, 3, mode="sum")
        >>> bag(lm.tensor([1, 2, 4, 5]), lm.tensor([0, 2])).shape
        lamina.Size([2, 3])
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight: Any = None, include_last_offset: bool = False,
                 padding_idx: int | None = None) -> None:
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max'; got {mode!r}")
        super().__init__(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type,
                         scale_grad_by_freq, sparse, _weight)
        self.mode, self.include_last_offset = mode, include_last_offset

    _shown = ("max_norm", "norm_type", "scale_grad_by_freq", "sparse", "mode", "padding_idx")

    def forward(self, input: Any, offsets: Any = None, per_sample_weights: Any = None
                ) -> Tensor:
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, False, per_sample_weights,
                               self.include_last_offset, self.padding_idx)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "mode": self.mode,
                "include_last_offset": self.include_last_offset}
