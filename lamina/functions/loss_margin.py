"""The multi-class margin losses (multi_margin_loss, multilabel_margin_loss) and the
triplet loss with a distance of the caller's choosing."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.loss import legacy_reduction
from lamina.functions.loss_embedding import pairwise_distance
from lamina.functions.loss_pointwise import reduce_loss


def constant(values: Any) -> Tensor:
    """An array as a tensor outside the graph (masks, indices)."""
    return Tensor(np.asarray(values))


def _rows(input: Tensor, target: Any, op: str) -> tuple[Tensor, np.ndarray, bool]:  # noqa: A002
    """(N, C) scores and the targets as an int array; whether the input was one sample."""
    t = np.asarray(target.array if isinstance(target, Tensor) else target)
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"{op}: expected an integer target (class indices); got {t.dtype}")
    single = input.ndim <= 1
    x = input.reshape(1, -1) if single else input
    t = t.reshape(1, -1) if single and op == "multilabel_margin_loss" else \
        (t.reshape(1) if single else t)
    if x.ndim != 2 or t.shape[0] != x.shape[0]:
        raise ShapeError(f"{op}: expected input (N, C) or (C,) and a target for each of its "
                         f"rows; got input {tuple(input.shape)}, target {tuple(t.shape)}")
    return x, t.astype(np.int64), single


def multi_margin_loss(input: Tensor, target: Any, p: int = 1, margin: float = 1.0,  # noqa: A002
                      weight: Any = None, size_average: Any = None, reduce: Any = None,
                      reduction: str = "mean") -> Tensor:
    """The multi-class hinge: for each sample, the sum over the wrong classes i of
    max(0, margin - x[y] + x[i]) ** p (times weight[y]), over the number of classes.

    Examples:
        >>> F.multi_margin_loss(lm.tensor([[0.1, 0.2, 0.4, 0.8]]), lm.tensor([3]))
        tensor(0.3250)
    """
    if p not in (1, 2):
        raise ValueError(f"multi_margin_loss: only p == 1 and p == 2 supported; got {p!r}")
    x, y, single = _rows(input, target, "multi_margin_loss")
    n, c = x.shape
    if y.min(initial=0) < 0 or y.max(initial=0) >= c:
        raise IndexError(f"multi_margin_loss: target out of range for {c} classes")
    right = x.gather(1, constant(y[:, None]))
    hinge = (margin - right + x).clamp(min=0)
    if p == 2:
        hinge = hinge * hinge
    wrong = np.ones((n, c), x.dtype)
    wrong[np.arange(n), y] = 0
    hinge = hinge * constant(wrong)
    if weight is not None:
        w = weight if isinstance(weight, Tensor) else constant(np.asarray(weight, x.dtype))
        hinge = hinge * w[constant(y)][:, None]
    loss = hinge.sum(1) / c
    return reduce_loss(loss.reshape(()) if single else loss,
                       legacy_reduction(size_average, reduce, reduction), "multi_margin_loss")


def multilabel_margin_loss(input: Tensor, target: Any, size_average: Any = None,  # noqa: A002
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """The multi-label hinge: each sample's target lists its classes, ended by the first
    -1; the loss sums max(0, 1 - (x[j] - x[i])) over its classes j and the other classes
    i, over the number of classes.

    Examples:
        >>> F.multilabel_margin_loss(lm.tensor([[0.1, 0.2, 0.4, 0.8]]),
        ...                          lm.tensor([[3, 0, -1, 1]]))
        tensor(0.8500)
    """
    x, t, single = _rows(input, target, "multilabel_margin_loss")
    n, c = x.shape
    if t.shape != (n, c):
        raise ShapeError(f"multilabel_margin_loss: the target must have the input's shape "
                         f"{tuple(input.shape)}; got {tuple(t.shape)}")
    listed = np.cumprod(t >= 0, axis=1).astype(bool)  # entries before the first -1
    member = np.zeros((n, c), bool)
    rows = np.nonzero(listed)
    member[rows[0], t[rows]] = True
    picked = x.gather(1, constant(np.where(listed, t, 0)))  # (N, K): x at each listed class
    hinge = (1 - picked[:, :, None] + x[:, None, :]).clamp(min=0)  # (N, K, C)
    pairs = listed[:, :, None] & ~member[:, None, :]
    loss = (hinge * constant(pairs.astype(x.dtype))).sum((1, 2)) / c
    return reduce_loss(loss.reshape(()) if single else loss,
                       legacy_reduction(size_average, reduce, reduction),
                       "multilabel_margin_loss")


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) for a distance d of your choosing (the pairwise
    Euclidean one by default); `swap` uses the closer of d(a, n) and d(p, n).

    Examples:
        >>> a = lm.zeros(1, 2)
        >>> F.triplet_margin_with_distance_loss(a, a, a + 3.0,
        ...     distance_function=lambda u, v: (u - v).abs().sum(-1))
        tensor(0.)
    """
    d = distance_function or pairwise_distance
    d_pos, d_neg = d(anchor, positive), d(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(d(positive, negative))
    loss = (d_pos - d_neg + margin).clamp(min=0)
    return reduce_loss(loss, reduction, "triplet_margin_with_distance_loss")
