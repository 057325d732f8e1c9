"""Losses computed element by element, then reduced: MSE, l1, smooth L1, Huber, binary
cross-entropy (on logits, and on probabilities), KL divergence, soft margin, Poisson and
Gaussian NLL.

Each has PyTorch's arguments, including the deprecated `size_average` / `reduce`, and is a
composite of differentiable ops, except binary cross-entropy with logits, one op with its
own backward (BCEWithLogits) that never computes exp of a large number.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.activation import softplus, softplus_array
from lamina.functions.axis_reductions import mean
from lamina.functions.axis_reductions import sum as sum_
from lamina.functions.loss import _check_reduction, legacy_reduction
from lamina.functions.math import where
from lamina.functions.operands import cast


def reduce_loss(loss: Tensor, reduction: str, op: str) -> Tensor:
    """'none', 'mean' or 'sum' of per-element losses."""
    _check_reduction(op, reduction)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _target(target: Any, x: Tensor, op: str) -> Tensor:
    t = target if isinstance(target, Tensor) else Tensor(np.asarray(target, x.dtype))
    try:
        np.broadcast_shapes(tuple(x.shape), tuple(t.shape))
    except ValueError:
        raise ShapeError(f"{op}: target of shape {tuple(t.shape)} does not broadcast with "
                         f"the input's {tuple(x.shape)}") from None
    return cast(t, x.dtype) if t.dtype.kind == "f" else t


def l1_loss(input: Tensor, target: Any, size_average: Any = None,  # noqa: A002
            reduce: Any = None, reduction: str = "mean") -> Tensor:
    """|input - target|, reduced.

    Examples:
        >>> F.l1_loss(lm.tensor([1.0, -3.0]), lm.zeros(2)).item()
        2.0
    """
    d = input - _target(target, input, "l1_loss")
    return reduce_loss(d.abs(), legacy_reduction(size_average, reduce, reduction), "l1_loss")


def smooth_l1_loss(input: Tensor, target: Any, size_average: Any = None,  # noqa: A002
                   reduce: Any = None, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target).

    Examples:
        >>> F.smooth_l1_loss(lm.tensor([0.5, 3.0]), lm.zeros(2), reduction="none")
        tensor([0.1250, 2.5000])
    """
    d = (input - _target(target, input, "smooth_l1_loss")).abs()
    loss = d if beta == 0 else where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction),
                       "smooth_l1_loss")


def huber_loss(input: Tensor, target: Any, reduction: str = "mean",  # noqa: A002
               delta: float = 1.0, weight: Any = None) -> Tensor:
    """0.5 d^2 where |d| <= delta, else delta (|d| - 0.5 delta) (d = input - target).

    Examples:
        >>> F.huber_loss(lm.tensor([0.5, 3.0]), lm.zeros(2), reduction="none")
        tensor([0.1250, 2.5000])
    """
    d = (input - _target(target, input, "huber_loss")).abs()
    loss = where(d <= delta, d * d * 0.5, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction, "huber_loss")


def binary_cross_entropy(input: Tensor, target: Any, weight: Any = None,  # noqa: A002
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """-(y log p + (1 - y) log(1 - p)) for probabilities p; each log is clamped at -100, as
    PyTorch clamps it, so p = 0 or 1 gives a large finite loss.

    Examples:
        >>> round(F.binary_cross_entropy(lm.tensor([0.5]), lm.tensor([1.0])).item(), 4)
        0.6931
    """
    y = _target(target, input, "binary_cross_entropy")
    if ((input.array < 0) | (input.array > 1)).any():
        raise RuntimeError("binary_cross_entropy: all elements of input should be between "
                           "0 and 1; use binary_cross_entropy_with_logits for scores")
    log_p = input.log().clamp(min=-100)
    log_q = (1 - input).log().clamp(min=-100)
    loss = -(y * log_p + (1 - y) * log_q)
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction),
                       "binary_cross_entropy")


def kl_div(input: Tensor, target: Any, size_average: Any = None,  # noqa: A002
           reduce: Any = None, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) per element, input being log-probabilities: target (log
    target - input), with 0 where target is 0. 'batchmean' divides the sum by the batch
    size, the true KL divergence per sample.

    Examples:
        >>> p = lm.tensor([[0.5, 0.5]])
        >>> F.kl_div(p.log(), p, reduction="batchmean").item()
        0.0
    """
    t = _target(target, input, "kl_div")
    if log_target:
        loss = t.exp() * (t - input)
    else:
        positive = t > 0
        safe = where(positive, t, 1.0)
        loss = where(positive, t * (safe.log() - input), 0.0)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return reduce_loss(loss, reduction, "kl_div")


def soft_margin_loss(input: Tensor, target: Any, size_average: Any = None,  # noqa: A002
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-y x)) for labels y of +1 and -1.

    Examples:
        >>> round(F.soft_margin_loss(lm.zeros(2), lm.tensor([1.0, -1.0])).item(), 4)
        0.6931
    """
    loss = softplus(-_target(target, input, "soft_margin_loss") * input)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction),
                       "soft_margin_loss")


def poisson_nll_loss(input: Tensor, target: Any, log_input: bool = True,  # noqa: A002
                     full: bool = False, size_average: Any = None, eps: float = 1e-8,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Poisson negative log-likelihood: exp(x) - y x for log rates, or x - y log(x + eps);
    `full` adds Stirling's term for targets above 1.

    Examples:
        >>> F.poisson_nll_loss(lm.zeros(2), lm.zeros(2)).item()
        1.0
    """
    y = _target(target, input, "poisson_nll_loss")
    loss = input.exp() - y * input if log_input else input - y * (input + eps).log()
    if full:
        big = y > 1
        safe = where(big, y, 2.0)
        loss = loss + where(big, safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log(),
                           0.0)
    return reduce_loss(loss, legacy_reduction(size_average, reduce, reduction),
                       "poisson_nll_loss")


def gaussian_nll_loss(input: Tensor, target: Any, var: Any, full: bool = False,  # noqa: A002
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """Gaussian negative log-likelihood 0.5 (log var + (input - target)^2 / var), var
    clamped below at eps (the clamp passes the gradient through, as in PyTorch); `full`
    adds 0.5 log(2 pi). var has input's shape, or one fewer dim, or a last dim of 1.

    Examples:
        >>> F.gaussian_nll_loss(lm.zeros(2), lm.zeros(2), lm.ones(2)).item()
        0.0
    """
    var = var if isinstance(var, Tensor) else Tensor(np.asarray(var, input.dtype))
    if var.ndim == input.ndim - 1 and tuple(var.shape) == tuple(input.shape[:-1]):
        var = var.unsqueeze(-1)
    if (var.array < 0).any():
        raise ValueError("gaussian_nll_loss: var has negative entry/entries")
    var = var + (var.clamp(min=eps) - var).detach()
    d = input - _target(target, input, "gaussian_nll_loss")
    loss = 0.5 * (var.log() + d * d / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction, "gaussian_nll_loss")


class BCEWithLogits(Function):
    def __init__(self, reduction: str) -> None:
        _check_reduction("binary_cross_entropy_with_logits", reduction)
        self.reduction = reduction

    def forward(self, x: Any, y: Any) -> Any:
        if x.shape != y.shape:
            raise ShapeError(
                f"binary_cross_entropy_with_logits: target must match the input; expected "
                f"{x.shape}, got {y.shape}"
            )
        self.save_for_backward(x, y)
        # softplus(x) - x*y equals -[y log s(x) + (1-y) log(1-s(x))] without ever
        # computing exp of a large positive number.
        loss = softplus_array(x) - x * y
        if self.reduction == "none":
            return loss
        return np.asarray(loss.mean() if self.reduction == "mean" else loss.sum(), dtype=x.dtype)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        x, y = self.saved_tensors
        scale = gy / x.size if self.reduction == "mean" else gy
        s = 0.5 * np.tanh(0.5 * x) + 0.5
        gx = ((s - y) * scale).astype(x.dtype, copy=False)
        gt = (-x * scale).astype(y.dtype, copy=False) if self.needs_input_grad[1] else None
        return gx, gt


def mse_loss(input: Tensor, target: Any, size_average: Any = None,  # noqa: A002
             reduce: Any = None, reduction: str = "mean") -> Tensor:
    """Mean squared error between input and a target of the same shape.

    Examples:
        >>> F.mse_loss(lm.tensor([1.0, 3.0]), lm.tensor([0.0, 0.0])).item()
        5.0
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction("mse_loss", reduction)
    x = input
    target_shape = getattr(target, "shape", np.shape(target))
    if x.shape != tuple(target_shape):
        raise ShapeError(f"mse_loss: target must match the input; expected {tuple(x.shape)}, got "
                         f"{tuple(target_shape)}")
    diff = x - target
    sq = diff * diff
    if reduction == "none":
        return sq
    return mean(sq) if reduction == "mean" else sum_(sq)


def binary_cross_entropy_with_logits(input: Tensor, target: Any,  # noqa: A002
                                     weight: Any = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Any = None) -> Tensor:
    """Binary cross-entropy of sigmoid(input) against targets in [0, 1], computed stably
    from the logits; `weight` scales each element, `pos_weight` the positive term of each
    class (the last dim).

    Examples:
        >>> round(F.binary_cross_entropy_with_logits(lm.zeros(2), lm.ones(2)).item(), 4)
        0.6931
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    x = input
    if not isinstance(target, Tensor):
        target = Tensor(np.asarray(target, dtype=x.dtype))
    if weight is None and pos_weight is None:
        return BCEWithLogits(reduction).apply(x, target)
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    # (1 - y) x + (1 + (pw - 1) y) softplus(-x): softplus keeps large |x| finite
    scale = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * x + scale * softplus(-x)
    if weight is not None:
        loss = loss * weight
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()
