"""`nn.utils.parametrizations`: weight and spectral normalisation as parametrisations
(PyTorch's current forms: `parametrizations.weight.original0` is weight norm's magnitude,
`original1` its direction; spectral norm keeps `original` and its power iteration's
vectors as the buffers `parametrizations.weight.0._u` and `_v`).

    >>> type(nn.utils.parametrizations.weight_norm(nn.Linear(2, 2))).__name__
    'ParametrizedLinear'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.utils.parametrize import register_parametrization
from lamina.nn.utils.weight_norms import _norm_except_dim
from lamina.random import numpy_rng


class _WeightNorm(Layer):
    def __init__(self, dim: int | None) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:  # type: ignore[override]
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Layer, name: str = "weight", dim: int | None = 0) -> Any:
    """`module.<name>` as magnitude times direction, `original0 * original1 / |original1|`
    (the norm over every dim but `dim`; over all of it where dim is None), as PyTorch's.

    Examples:
        >>> layer = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
        >>> list(layer.state_dict())
        ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    return register_parametrization(module, name, _WeightNorm(dim))


class _SpectralNorm(Layer):
    """weight / sigma, sigma its largest singular value estimated by power iteration on
    the weight as a matrix (dim `dim` first, the rest flattened); a vector is normalised."""

    def __init__(self, weight: Tensor, n_power_iterations: int, dim: int, eps: float) -> None:
        super().__init__()
        if n_power_iterations <= 0:
            raise ValueError("spectral_norm: n_power_iterations must be positive; got "
                             f"{n_power_iterations}")
        self.ndim, self.eps, self.n_power_iterations = weight.ndim, eps, n_power_iterations
        self.dim = dim % weight.ndim if weight.ndim else 0
        if self.ndim > 1:
            h, w = self._matrix(weight).shape
            rng, dtype = numpy_rng(), weight.dtype
            self.register_buffer("_u", Tensor(_normalized(rng.standard_normal(h), eps)
                                              .astype(dtype)))
            self.register_buffer("_v", Tensor(_normalized(rng.standard_normal(w), eps)
                                              .astype(dtype)))
            self._power_method(self._matrix(weight), 15)

    def _matrix(self, weight: Tensor) -> Tensor:
        w = weight.movedim(self.dim, 0) if self.dim else weight
        return w.reshape(w.shape[0], -1)

    def _power_method(self, mat: Tensor, steps: int) -> None:
        with no_grad():  # the buffers are written in place, as PyTorch's are
            m, u, v = mat.detach().numpy(), self._u.numpy(), self._v.numpy()
            for _ in range(steps):
                u[...] = _normalized(m @ v, self.eps)
                v[...] = _normalized(m.T @ u, self.eps)

    def forward(self, weight: Tensor) -> Tensor:  # type: ignore[override]
        if self.ndim == 1:
            return weight / weight.norm().clamp(min=self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        sigma = (self._u.clone() * (mat @ self._v.clone())).sum()
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def _normalized(x: np.ndarray, eps: float) -> np.ndarray:
    return x / max(float(np.linalg.norm(x)), eps)


def spectral_norm(module: Layer, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> Any:
    """`module.<name>` divided by its largest singular value, estimated by
    `n_power_iterations` steps of power iteration at each forward in training, as
    PyTorch's parametrisation (SN-GAN's discriminators). `dim` is the output dim: 1 for
    transposed convolutions, else 0.

    Examples:
        >>> layer = nn.utils.parametrizations.spectral_norm(nn.Linear(3, 2))
        >>> list(layer.state_dict())
        ['bias', 'parametrizations.weight.original', 'parametrizations.weight.0._u', \
'parametrizations.weight.0._v']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"spectral_norm: {type(module).__name__} has no parameter or buffer "
                         f"{name!r}")
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    return register_parametrization(module, name,
                                    _SpectralNorm(weight, n_power_iterations, dim, eps))
