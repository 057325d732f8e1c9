"""PyTorch's window functions (torch.hann_window, ...): the tapers of spectral analysis,
periodic (for an FFT of the window's length) or symmetric."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor


def _float(dtype: Any) -> Any:
    return dtypes.resolve(dtype) if dtype is not None else dtypes.get_default_dtype()


def _window(length: int, periodic: bool, dtype: Any, shape: Any) -> Tensor:
    """A window of `length` points from shape(n, N) over n = 0..N-1; periodic windows are
    the first `length` points of the symmetric one of length + 1."""
    if length < 0:
        raise RuntimeError(f"window: window_length must be non-negative; got {length}")
    if length <= 1:
        return as_tensor(np.ones(length), dtype=_float(dtype))
    n = length + 1 if periodic else length
    return as_tensor(shape(np.arange(length, dtype=np.float64), n), dtype=_float(dtype))


def hann_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                **kwargs: Any) -> Tensor:
    """The Hann window, 0.5 - 0.5 cos(2 pi n / (N - 1)).

    Examples:
        >>> lm.hann_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window(window_length, periodic, dtype,
                   lambda k, n: 0.5 - 0.5 * np.cos(2 * math.pi * k / (n - 1)))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: Any = None, **kwargs: Any) -> Tensor:
    """The Hamming window, alpha - beta cos(2 pi n / (N - 1)).

    Examples:
        >>> lm.hamming_window(4)
        tensor([0.0800, 0.5400, 1.0000, 0.5400])
    """
    return _window(window_length, periodic, dtype,
                   lambda k, n: alpha - beta * np.cos(2 * math.pi * k / (n - 1)))


def blackman_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    **kwargs: Any) -> Tensor:
    """The Blackman window.

    Examples:
        >>> lm.blackman_window(5, periodic=False)[1:4]
        tensor([0.3400, 1.0000, 0.3400])
    """
    return _window(window_length, periodic, dtype,
                   lambda k, n: 0.42 - 0.5 * np.cos(2 * math.pi * k / (n - 1))
                   + 0.08 * np.cos(4 * math.pi * k / (n - 1)))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: Any = None,
                    **kwargs: Any) -> Tensor:
    """The triangular Bartlett window, 1 - |2n / (N - 1) - 1|.

    Examples:
        >>> lm.bartlett_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window(window_length, periodic, dtype,
                   lambda k, n: 1 - np.abs(2 * k / (n - 1) - 1))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: Any = None, **kwargs: Any) -> Tensor:
    """The Kaiser window, I0(beta sqrt(1 - (2n / (N - 1) - 1) ** 2)) / I0(beta).

    Examples:
        >>> lm.kaiser_window(3, periodic=False, beta=0.0)
        tensor([1., 1., 1.])
    """
    return _window(window_length, periodic, dtype,
                   lambda k, n: np.i0(beta * np.sqrt(np.clip(1 - (2 * k / (n - 1) - 1) ** 2,
                                                             0, None))) / np.i0(beta))


__all__ = ["bartlett_window", "blackman_window", "hamming_window", "hann_window",
           "kaiser_window"]
