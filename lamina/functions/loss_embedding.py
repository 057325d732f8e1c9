"""Distances between embeddings and the losses built on them: cosine similarity,
pairwise distance, normalize, and the margin losses (cosine embedding, margin ranking,
hinge embedding, triplet margin, multi-label soft margin). Composites of differentiable
ops, with PyTorch's arguments."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.activation import softplus
from lamina.functions.loss import legacy_reduction
from lamina.functions.loss_pointwise import _target, reduce_loss
from lamina.functions.math import where


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / max(|x1| |x2|, eps) along `dim` (inputs broadcast together).

    Examples:
        >>> F.cosine_similarity(lm.tensor([[1.0, 0.0]]), lm.tensor([[1.0, 1.0]])).item()
        0.7071067690849304
    """
    dot = (x1 * x2).sum(dim)
    squares = (x1 * x1).sum(dim) * (x2 * x2).sum(dim)
    return dot / squares.clamp(min=eps * eps).sqrt()


def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002
    """The p-norm distance between every pair of rows i < j of (N, M), in row order; the
    gradient at a zero distance is zero, as PyTorch's.

    Examples:
        >>> F.pdist(lm.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
        tensor([5.0000, 1.0000, 4.2426])
    """
    if input.ndim != 2:
        raise ShapeError(f"pdist: expected a 2-D input (N, M); got shape {tuple(input.shape)}")
    rows, cols = np.triu_indices(input.shape[0], 1)
    return (input[Tensor(rows)] - input[Tensor(cols)]).norm(p, dim=-1)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last dim.

    Examples:
        >>> F.pairwise_distance(lm.tensor([[3.0, 0.0]]), lm.tensor([[0.0, 4.0]]), eps=0)
        tensor([5.])
    """
    return (x1 - x2 + eps).norm(p, dim=-1, keepdim=keepdim)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,  # noqa: A002
              out: Any = None) -> Tensor:
    """input divided by its p-norm along `dim` (at least eps).

    Examples:
        >>> F.normalize(lm.tensor([[3.0, 4.0]]))
        tensor([[0.6000, 0.8000]])
    """
    return input / input.norm(p, dim=dim, keepdim=True).clamp(min=eps)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) for pairs labelled 1, max(0, cos - margin) for pairs labelled -1.

    Examples:
        >>> x = lm.tensor([[1.0, 0.0]])
        >>> F.cosine_embedding_loss(x, x, lm.tensor([1])).item()
        0.0
    """
    cos = cosine_similarity(input1, input2, dim=-1)
    y = target if isinstance(target, Tensor) else Tensor(target)
    loss = where(y == 1, 1 - cos, (cos - margin).clamp(min=0))
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction),
                       "cosine_embedding_loss")


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Any, margin: float = 0.0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -y (x1 - x2) + margin): x1 should rank above x2 where y = 1, below where -1.

    Examples:
        >>> F.margin_ranking_loss(lm.tensor([2.0]), lm.tensor([1.0]), lm.tensor([1.0])).item()
        0.0
    """
    y = _target(target, input1, "margin_ranking_loss")
    loss = (-y * (input1 - input2) + margin).clamp(min=0)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction),
                       "margin_ranking_loss")


def hinge_embedding_loss(input: Tensor, target: Any, margin: float = 1.0,  # noqa: A002
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """x where y = 1, max(0, margin - x) where y = -1 (x often a distance).

    Examples:
        >>> F.hinge_embedding_loss(lm.tensor([0.3, 0.3]), lm.tensor([1.0, -1.0]),
        ...                        reduction="none")
        tensor([0.3000, 0.7000])
    """
    y = _target(target, input, "hinge_embedding_loss")
    loss = where(y == 1, input, (margin - input).clamp(min=0))
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction),
                       "hinge_embedding_loss")


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with d the pairwise p-distance; `swap` uses the
    closer of d(a, n) and d(p, n).

    Examples:
        >>> a = lm.tensor([[0.0, 0.0]])
        >>> F.triplet_margin_loss(a, a, a + 3.0).item()
        0.0
    """
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    loss = (d_pos - d_neg + margin).clamp(min=0)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction),
                       "triplet_margin_loss")


def multilabel_soft_margin_loss(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of sigmoid(x) per class, averaged over the classes (last dim),
    then reduced over the samples.

    Examples:
        >>> round(F.multilabel_soft_margin_loss(lm.zeros(1, 3), lm.ones(1, 3)).item(), 4)
        0.6931
    """
    y = _target(target, input, "multilabel_soft_margin_loss")
    loss = y * softplus(-input) + (1 - y) * softplus(input)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss.mean(-1), legacy_reduction(size_average, reduce, reduction),
                       "multilabel_soft_margin_loss")
