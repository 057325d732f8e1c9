"""Initialisers that fill a parameter in place, drawing from lamina's seeded generator.

Names, arguments and formulas are PyTorch's (`torch.nn.init`), so a layer's default
initialisation has the same distribution as PyTorch's for the same layer.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from lamina import state
from lamina.autograd.tensor import Tensor
from lamina.functions.elementwise import erfinv_array as _erfinv


def _fill(t: Tensor, values: Any) -> Tensor:
    t.array[...] = np.asarray(values).astype(t.dtype, copy=False)
    return t


def fan_in_and_fan_out(shape: tuple[int, ...]) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight (out, in, *kernel): in * prod(kernel), out * prod(kernel)."""
    if len(shape) < 2:
        raise ValueError(f"init: fan in and fan out need a weight of 2+ dims; got shape {shape}")
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity (PyTorch's table)."""
    if nonlinearity in ("linear", "sigmoid", "conv1d", "conv2d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}")


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with U(a, b)."""
    return _fill(t, state.rng().uniform(a, b, t.shape))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with N(mean, std^2)."""
    return _fill(t, state.rng().normal(mean, std, t.shape))


def constant_(t: Tensor, value: float) -> Tensor:
    """Fill with a constant."""
    return _fill(t, np.full(t.shape, value))


def zeros_(t: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(t, 0.0)


def ones_(t: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(t, 1.0)


def xavier_uniform_(t: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot & Bengio (2010): U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = fan_in_and_fan_out(t.shape)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -a, a)


def xavier_normal_(t: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot & Bengio (2010): N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = fan_in_and_fan_out(t.shape)
    return normal_(t, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _kaiming_std(t: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming init: mode must be 'fan_in' or 'fan_out'; got {mode!r}")
    fan_in, fan_out = fan_in_and_fan_out(t.shape)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(t: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """He et al. (2015): U(-b, b) with b = gain * sqrt(3 / fan)."""
    bound = math.sqrt(3.0) * _kaiming_std(t, a, mode, nonlinearity)
    return uniform_(t, -bound, bound)


def kaiming_normal_(t: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """He et al. (2015): N(0, std^2) with std = gain / sqrt(fan)."""
    return normal_(t, 0.0, _kaiming_std(t, a, mode, nonlinearity))


def orthogonal_(t: Tensor, gain: float = 1.0) -> Tensor:
    """Saxe et al. (2013): a (semi-)orthogonal matrix from the QR of a Gaussian, times gain."""
    if t.ndim < 2:
        raise ValueError(f"orthogonal_: needs a tensor of 2+ dims; got shape {tuple(t.shape)}")
    rows, cols = t.shape[0], math.prod(t.shape[1:])
    flat = state.rng().normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q *= np.sign(np.diag(r))  # makes the decomposition unique, so q is uniformly distributed
    if rows < cols:
        q = q.T
    return _fill(t, gain * q.reshape(t.shape))


def eye_(t: Tensor) -> Tensor:
    """The identity matrix (ones on the diagonal of a 2-d tensor).

    Examples:
        >>> nn.init.eye_(lm.empty(2, 3))
        tensor([[1., 0., 0.],
                [0., 1., 0.]])
    """
    if t.ndim != 2:
        raise ValueError(f"eye_: only tensors with 2 dimensions are supported; got {t.ndim}")
    return _fill(t, np.eye(*t.shape))


def dirac_(t: Tensor, groups: int = 1) -> Tensor:
    """A convolution kernel (out, in, *k) that passes its input through unchanged: 1 at
    the centre of channel i's kernel for input channel i (per group), 0 elsewhere."""
    if t.ndim not in (3, 4, 5):
        raise ValueError(f"dirac_: only tensors with 3, 4 or 5 dimensions are supported; "
                         f"got {t.ndim}")
    out_per_group = t.shape[0] // groups
    values = np.zeros(t.shape)
    centre = tuple(k // 2 for k in t.shape[2:])
    for g in range(groups):
        for d in range(min(out_per_group, t.shape[1])):
            values[(g * out_per_group + d, d, *centre)] = 1
    return _fill(t, values)


def trunc_normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0) -> Tensor:
    """N(mean, std^2) truncated to [a, b] (by inverting the normal CDF of a uniform draw
    between the bounds' CDFs, as PyTorch does).

    Examples:
        >>> w = nn.init.trunc_normal_(lm.empty(1000), std=1.0, a=-0.5, b=0.5)
        >>> bool(w.abs().max() <= 0.5)
        True
    """
    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo, hi = cdf((a - mean) / std), cdf((b - mean) / std)
    u = state.rng().uniform(2 * lo - 1, 2 * hi - 1, t.shape)
    values = _erfinv(u) * std * math.sqrt(2.0) + mean
    return _fill(t, np.clip(values, a, b))


def sparse_(t: Tensor, sparsity: float, std: float = 0.01) -> Tensor:
    """N(0, std^2) with a share `sparsity` of each column set to zero (Martens, 2010).

    Examples:
        >>> w = nn.init.sparse_(lm.empty(10, 4), sparsity=0.5)
        >>> [int((w[:, j] == 0).sum()) for j in range(4)]
        [5, 5, 5, 5]
    """
    if t.ndim != 2:
        raise ValueError(f"sparse_: only tensors with 2 dimensions are supported; got {t.ndim}")
    rows, cols = t.shape
    zeros = int(math.ceil(sparsity * rows))
    values = state.rng().normal(0.0, std, (rows, cols))
    for j in range(cols):
        values[state.rng().permutation(rows)[:zeros], j] = 0
    return _fill(t, values)


def default_linear_(weight: Tensor, bias: Tensor | None, fan_in: int) -> None:
    """PyTorch's default for Linear and Conv: kaiming_uniform_(a=sqrt(5)) and a bias from
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), which bounds the weights by 1/sqrt(fan_in) too."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)


def _deprecated(name: str) -> Any:
    """PyTorch's old name without the trailing underscore: the same fill, with its warning."""
    fill = globals()[name + "_"]

    def old(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
                      FutureWarning, stacklevel=2)
        return fill(*args, **kwargs)
    old.__name__ = old.__qualname__ = name
    old.__doc__ = f"Deprecated: `{name}_`, with PyTorch's warning."
    return old


(normal, uniform, constant, xavier_normal, xavier_uniform, kaiming_normal, kaiming_uniform,
 orthogonal, sparse, dirac, eye) = (_deprecated(n) for n in (
     "normal", "uniform", "constant", "xavier_normal", "xavier_uniform", "kaiming_normal",
     "kaiming_uniform", "orthogonal", "sparse", "dirac", "eye"))
