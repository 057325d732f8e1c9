"""The frequency helpers of lamina.fft: the sample frequencies of a transform's bins and
the shifts that put the zero frequency in the middle."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor


def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point fft with sample spacing d: 0, 1, ..., -1 over n d.

    Examples:
        >>> lm.fft.fftfreq(4)
        tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    dtypes.check_device(device)
    f = np.fft.fftfreq(n, d).astype(dtypes.resolve(dtype) or dtypes.get_default_dtype())
    return Tensor(f, requires_grad=requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, layout: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """The n // 2 + 1 non-negative sample frequencies of an n-point rfft.

    Examples:
        >>> lm.fft.rfftfreq(4)
        tensor([0.0000, 0.2500, 0.5000])
    """
    dtypes.check_device(device)
    f = np.fft.rfftfreq(n, d).astype(dtypes.resolve(dtype) or dtypes.get_default_dtype())
    return Tensor(f, requires_grad=requires_grad)


def _shift(x: Tensor, dim: Any, sign: int) -> Tensor:
    dims = range(x.ndim) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    dims = [d % x.ndim for d in dims]
    return x.roll([sign * (x.shape[d] // 2) for d in dims], dims) if dims else x


def fftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The zero frequency moved to the middle of each dim in `dim` (all by default).

    Examples:
        >>> lm.fft.fftshift(lm.fft.fftfreq(4))
        tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift(input, dim, 1)


def ifftshift(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The inverse of fftshift.

    Examples:
        >>> lm.fft.ifftshift(lm.fft.fftshift(lm.arange(5)))
        tensor([0, 1, 2, 3, 4])
    """
    return _shift(input, dim, -1)
