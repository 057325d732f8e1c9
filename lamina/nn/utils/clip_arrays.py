"""Gradient clipping on arrays, in place on parameters' `.grad`, returning plain floats (the
Trainer's and the parameter server's; `clip_grad` wraps them in PyTorch's return types)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np


def _grads(params: Iterable[Any]) -> list[Any]:
    if hasattr(params, "grad"):
        params = [params]
    return [p.grad.array for p in params if p.grad is not None]


def clip_grad_norm_(params: Iterable[Any], max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False) -> float:
    """Scale all gradients together so their joint norm is at most `max_norm`.

    Args:
        params: tensors whose `.grad` to clip (those without a gradient are skipped).
        max_norm: the largest allowed norm.
        norm_type: p of the p-norm; float('inf') for the max norm.
        error_if_nonfinite: raise when the total norm is NaN or infinite.

    Returns:
        The total norm before clipping.
    """
    grads = _grads(params)
    if not grads:
        return 0.0
    total = total_norm(grads, norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(f"clip_grad_norm_: the total norm of order {float(norm_type)} of "
                           f"the gradients is {total}, so they cannot be clipped; set "
                           f"error_if_nonfinite=False to scale them by it anyway (as PyTorch "
                           f"does: they become NaN), or find where the loss went non-finite "
                           f"(lamina.autograd.detect_anomaly)")
    _scale(grads, max_norm, total)
    return total


def total_norm(arrays: list[Any], norm_type: float = 2.0) -> float:
    """The p-norm of all the arrays' elements together (0 for none)."""
    if not arrays:
        return 0.0
    norm_type = float(norm_type)  # PyTorch's "inf" too
    if math.isinf(norm_type):
        pick = max if norm_type > 0 else min
        return pick(float(np.abs(a).max() if norm_type > 0 else np.abs(a).min())
                    for a in arrays)
    return float(sum(float((np.abs(a) ** norm_type).sum()) for a in arrays)
                 ** (1.0 / norm_type))


def scale_grads(params: Iterable[Any], max_norm: float, total: float) -> None:
    """The parameters' gradients scaled down to a joint norm of max_norm, given it."""
    _scale(_grads(params), max_norm, total)


def _scale(grads: list[Any], max_norm: float, total: float) -> None:
    coef = max_norm / (total + 1e-6)  # PyTorch's epsilon, so a zero gradient stays zero
    if not coef >= 1:  # a NaN norm makes every gradient NaN, as PyTorch's clamp(coef, max=1)
        with np.errstate(invalid="ignore"):  # inf * 0 under an infinite norm: NaN, quietly
            for g in grads:
                g *= g.dtype.type(coef)


def clip_grad_value_(params: Iterable[Any], clip_value: float) -> None:
    """Clamp every gradient element to [-clip_value, clip_value]."""
    for g in _grads(params):
        np.clip(g, -clip_value, clip_value, out=g)
