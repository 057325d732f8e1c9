"""Losses and metrics by name, for job configs and the Trainer."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.registry import Registry


def sequence_cross_entropy(scores: Tensor, labels: Any) -> Tensor:
    """Cross-entropy of scores (..., C) against labels (...): classes on the last axis, as
    a sequence model gives them ((B, T, C) against (B, T)), averaged over every position."""
    if scores.shape[:-1] != getattr(labels, "shape", None):
        raise ShapeError(f"sequence_cross_entropy: expected scores (..., C) and labels of "
                         f"their shape without C; got {tuple(scores.shape)} and "
                         f"{tuple(getattr(labels, 'shape', labels))}")
    return F.cross_entropy(F.reshape(scores, (-1, scores.shape[-1])),
                           F.reshape(labels, (-1,)))


LOSSES = Registry("loss")  # the losses a job names
for _fn in (F.cross_entropy, sequence_cross_entropy, F.mse_loss,
            F.binary_cross_entropy_with_logits, F.nll_loss):
    LOSSES.add(_fn.__name__, _fn)


def accuracy(output: Tensor, target: Tensor) -> float:
    """Fraction of samples whose highest score is the label (scores on the last axis)."""
    pred = output.array.reshape(-1, output.shape[-1]).argmax(axis=1)
    return float((pred == target.array.reshape(-1)).mean())


METRICS = Registry("metric")
METRICS.add("accuracy", accuracy)


def get_loss(loss: str | Mapping[str, Any] | Callable[[Tensor, Any], Tensor]
             ) -> Callable[[Tensor, Any], Tensor]:
    """A loss function from its name (one of LOSSES), from {"type": name, **keyword
    arguments} (`{"type": "cross_entropy", "label_smoothing": 0.1}`), or the callable
    itself."""
    if callable(loss):
        return loss
    args: dict[str, Any] = {}
    if isinstance(loss, Mapping):
        args = {k: v for k, v in loss.items() if k != "type"}
        loss = loss.get("type")
    LOSSES.lookup(loss)  # an unknown name: the error says which are known
    check_loss_args(args)
    fn = functools.partial(LOSSES[loss], **args) if args else LOSSES[loss]

    def named(output: Tensor, target: Any) -> Tensor:
        try:
            return fn(output, target)
        except (ShapeError, IndexError) as e:  # the job's `loss:` key is where to look, as
            e.job_key = "loss"  # the CLI says (a shape, or labels outside the classes)
            raise

    return functools.update_wrapper(named, LOSSES[loss])


def check_loss_args(args: Mapping[str, Any]) -> None:
    """Raise ValueError, naming the argument, for a training loss's keyword argument that
    no batch could make right, before the first batch: training steps on one number per
    batch (so reduction 'none' is out), a smoothing lies in [0, 1], and class weights
    are finite and non-negative, one per class."""
    if args.get("reduction", "mean") not in ("mean", "sum"):
        raise ValueError(f"reduction: training needs one number per batch, so 'mean' or "
                         f"'sum'; got {args['reduction']!r}")
    smoothing = args.get("label_smoothing", 0.0)
    if isinstance(smoothing, bool) or not isinstance(smoothing, int | float) or not (
            0 <= smoothing <= 1):
        raise ValueError(f"label_smoothing: must be a number in [0, 1]; got {smoothing!r}")
    if args.get("weight") is not None:
        _check_class_weights(args["weight"])


def _check_class_weights(weight: Any) -> None:
    try:
        w = np.asarray(weight, dtype=np.float64)
    except (TypeError, ValueError):
        w = None
    if w is None or w.ndim != 1 or not w.size or not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"weight: must be a list of finite numbers >= 0, one per class; "
                         f"got {weight!r}")


def get_metric(name: str) -> Callable[[Tensor, Tensor], float]:
    return METRICS.lookup(name)


def register_metric(name: str) -> Callable:
    """Register `fn(output, target) -> float` as a metric usable by name."""
    return METRICS.register(name)
