"""Gradient clipping with PyTorch's signatures and return types; the work is done on
arrays by `clip_arrays`, which the Trainer calls with plain floats."""

from __future__ import annotations

import warnings
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
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    total = clip.clip_grad_norm_(params, max_norm, norm_type, error_if_nonfinite)
    grads = [p.grad for p in params if p.grad is not None]
    return Tensor(np.asarray(total, grads[0].real.dtype if grads else np.float32))


def clip_grad_value_(parameters: Iterable[Any] | Tensor, clip_value: float,
                     foreach: Any = None) -> None:
    """Clamp every gradient element to [-clip_value, clip_value], in place.

    Examples:
        >>> w = lm.tensor([1.0], requires_grad=True); (w * 5).sum().backward()
        >>> nn.utils.clip_grad_value_([w], 2.0); w.grad
        tensor([2.])
    """
    clip.clip_grad_value_(parameters, clip_value)


def get_total_norm(tensors: Iterable[Any] | Tensor, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """The p-norm of all the tensors' elements together (the first half of
    clip_grad_norm_: pass the gradients), as a 0-d tensor.

    Examples:
        >>> nn.utils.get_total_norm([lm.tensor([3.0]), lm.tensor([4.0])]).item()
        5.0
    """
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    arrays = [np.asarray(t.array if isinstance(t, Tensor) else t) for t in tensors]
    total = clip.total_norm(arrays, norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"get_total_norm: the total norm is {total}")
    dtype = arrays[0].real.dtype if arrays else np.float32  # a complex one's is real
    return Tensor(np.asarray(total, dtype))


def clip_grads_with_norm_(parameters: Iterable[Any] | Tensor, max_norm: float,
                          total_norm: Any, foreach: Any = None) -> None:
    """Scale the parameters' gradients by max_norm / (total_norm + 1e-6) where that is
    below 1 (the second half of clip_grad_norm_, given get_total_norm's answer).

    Examples:
        >>> w = lm.tensor([3.0, 4.0], requires_grad=True); (w * w).sum().backward()
        >>> nn.utils.clip_grads_with_norm_([w], 1.0, nn.utils.get_total_norm([w.grad]))
        >>> round(w.grad.norm().item(), 4)
        1.0
    """
    clip.scale_grads(parameters, max_norm, float(np.asarray(getattr(total_norm, "array",
                                                                     total_norm))))


def clip_grad_norm(parameters: Any, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: Any = None) -> Tensor:
    """`clip_grad_norm_` under its deprecated name, with PyTorch's FutureWarning.

    Examples:
        >>> import warnings
        >>> layer = nn.Linear(2, 1); layer(lm.ones(1, 2)).sum().backward()
        >>> with warnings.catch_warnings(record=True):
        ...     warnings.simplefilter("always")
        ...     total = nn.utils.clip_grad_norm(layer.parameters(), 1.0)
        >>> total.shape
        lamina.Size([])
    """
    warnings.warn("`nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)
