"""PyTorch's top-level statistics that are no Tensor method: std_mean, var_mean,
trapezoid, cov and corrcoef. Built from existing ops, so they differentiate."""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor


def std_mean(input: Tensor, dim: Any = None, *, correction: Any = 1,  # noqa: A002
             keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """(std, mean) over `dim`.

    Examples:
        >>> lm.std_mean(lm.tensor([1.0, 3.0]))
        (tensor(1.4142), tensor(2.))
    """
    return _spread_and_mean(input, "std", dim, correction, keepdim)


def var_mean(input: Tensor, dim: Any = None, *, correction: Any = 1,  # noqa: A002
             keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """(var, mean) over `dim`.

    Examples:
        >>> lm.var_mean(lm.tensor([1.0, 3.0]))
        (tensor(2.), tensor(2.))
    """
    return _spread_and_mean(input, "var", dim, correction, keepdim)


def _spread_and_mean(x: Tensor, spread: str, dim: Any, correction: Any,
                     keepdim: bool) -> tuple[Tensor, Tensor]:
    mean = x.mean(dim, keepdim=keepdim) if dim is not None else x.mean()
    return getattr(x, spread)(dim, keepdim=keepdim, correction=correction), mean


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
              dim: int = -1) -> Tensor:
    """The trapezoid rule's integral of y along `dim`, at points x (or spaced dx, 1 by
    default).

    Examples:
        >>> lm.trapezoid(lm.tensor([1.0, 2.0, 3.0]))
        tensor(4.)
    """
    n = y.shape[dim] - 1
    mid = (y.narrow(dim, 1, n) + y.narrow(dim, 0, n)) / 2
    if x is None:
        return mid.sum(dim) * (1.0 if dx is None else dx)
    steps = x.diff(dim=dim if x.ndim == y.ndim else -1)
    return (mid * steps).sum(dim)


def cov(input: Tensor, *, correction: int = 1, fweights: Any = None,  # noqa: A002
        aweights: Any = None) -> Tensor:
    """The covariance matrix of the variables in input's rows (observations in columns; a
    1-D input is one variable), with integer frequency and real observation weights, as
    PyTorch's (NumPy's formula).

    Examples:
        >>> lm.cov(lm.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    x = input.reshape(1, -1) if input.ndim < 2 else input
    w = None
    for weights in (fweights, aweights):
        if weights is not None:
            weights = as_tensor(weights).to(x.dtype)
            w = weights if w is None else w * weights
    if w is None:
        mean = x.mean(1, keepdim=True)
        factor: Any = x.shape[1] - correction
        centred = x - mean
        out = centred @ centred.t() / factor
    else:
        total = w.sum()
        mean = (x * w).sum(1, keepdim=True) / total
        if correction == 0:
            factor = total
        elif aweights is None:
            factor = total - correction
        else:
            factor = total - correction * (w * as_tensor(aweights).to(x.dtype)).sum() / total
        centred = x - mean
        out = (centred * w) @ centred.t() / factor
    return out.reshape(()) if input.ndim < 2 else out


def corrcoef(input: Tensor) -> Tensor:  # noqa: A002
    """Pearson's correlation coefficients of the variables in input's rows, clipped to
    [-1, 1] as PyTorch's.

    Examples:
        >>> lm.corrcoef(lm.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    return (c / (d.unsqueeze(1) * d.unsqueeze(0)).sqrt()).clamp(-1, 1)
