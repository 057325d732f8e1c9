"""Gradient clipping with PyTorch's signatures and return types; the work is done on
arrays by `clip_arrays`, which the Trainer calls with plain floats."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.nn.utils import clip_arrays as clip


def clip_grad_norm_(parameters: Iterable[Any] | Tensor, max_norm: float,
                    norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach: Any = None) -> Tensor:
    """Scale the gradients together so their joint p-norm is at most `max_norm`; returns
    the norm before clipping, as a 0-d tensor.

    Examples:
        >>> w = lm.tensor([3.0, 4.0], requires_grad=True)
        >>> (w * w).sum().backward()           # w.grad = [6, 8], norm 10
        >>> nn.utils.clip_grad_norm_([w], 1.0).item()
        10.0
    """
    total = clip.clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)
    return Tensor(np.asarray(total, np.float32))


def clip_grad_value_(parameters: Iterable[Any] | Tensor, clip_value: float,
                     foreach: Any = None) -> None:
    """Clamp every gradient element to [-clip_value, clip_value], in place.

    Examples:
        >>> w = lm.tensor([1.0], requires_grad=True); (w * 5).sum().backward()
        >>> nn.utils.clip_grad_value_([w], 2.0); w.grad
        tensor([2.])
    """
    clip.clip_grad_value_(parameters, clip_value)
