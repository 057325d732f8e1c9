"""VonMises, the circular normal law, and LowRankMultivariateNormal, a Gaussian whose
covariance is a low-rank factor plus a diagonal."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.creation_random import randn
from lamina.distributions import constraints
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.multivariate import MultivariateNormal
from lamina.functions.bessel import bessel_i_op
from lamina.random import numpy_rng
from lamina.tensor_functions import broadcast_tensors


class VonMises(Distribution):
    """Density exp(kappa cos(x - loc)) / (2 pi I0(kappa)) on [-pi, pi).

    Examples:
        >>> lm.distributions.VonMises(0.0, 1.0).log_prob(lm.tensor(0.0))
        tensor(-1.0738)
    """

    arg_constraints: dict[str, Any] = {
        "loc": constraints.real,
        "concentration": constraints.positive}
    support = constraints.real

    _shown = ("loc", "concentration")

    def __init__(self, loc: Any, concentration: Any, validate_args: bool | None = None) -> None:
        loc = param(loc, concentration if isinstance(concentration, Tensor) else None)
        self.loc, self.concentration = broadcast_tensors(loc, param(concentration, loc))
        super().__init__(tuple(self.loc.shape), (), validate_args)
        self._check(self.concentration.detach().numpy() > 0, "concentration must be positive")

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    def _bessel_ratio(self) -> Tensor:
        """I1(kappa) / I0(kappa), as the ratio of the scaled functions."""
        k = self.concentration
        return bessel_i_op(k, 1, True) / bessel_i_op(k, 0, True)

    @property
    def variance(self) -> Tensor:
        """The circular variance 1 - I1(kappa) / I0(kappa)."""
        return 1 - self._bessel_ratio()

    def log_prob(self, value: Any) -> Tensor:
        k = self.concentration
        # exp(kappa cos d) / I0(kappa) as exp(kappa (cos d - 1)) / i0e(kappa): no overflow
        scaled = k * ((param(value, self.loc) - self.loc).cos() - 1)
        return scaled - math.log(2 * math.pi) - bessel_i_op(k, 0, True).log()

    def _draw(self, shape: Any) -> Tensor:
        """Best and Fisher's (1979) rejection sampler, on the wrapped Cauchy envelope."""
        k = np.broadcast_to(self.concentration.detach().numpy().astype(np.float64), shape)
        loc = np.broadcast_to(self.loc.detach().numpy().astype(np.float64), shape)
        rng = numpy_rng()
        tau = 1 + np.sqrt(1 + 4 * k * k)
        rho = (tau - np.sqrt(2 * tau)) / (2 * k)
        r = (1 + rho * rho) / (2 * rho)
        out = np.empty(k.shape)
        todo = np.ones(k.shape, bool)
        while todo.any():
            u1, u2, u3 = (rng.random(k.shape) for _ in range(3))
            z = np.cos(np.pi * u1)
            f = (1 + r * z) / (r + z)
            c = k * (r - f)
            accept = todo & ((c * (2 - c) - u2 > 0) | (np.log(c / u2) + 1 - c >= 0))
            out[accept] = (np.sign(u3 - 0.5) * np.arccos(np.clip(f, -1, 1)))[accept]
            todo &= ~accept
        wrapped = (out + loc + np.pi) % (2 * np.pi) - np.pi
        return as_tensor(wrapped.astype(self.loc.dtype))

    def entropy(self) -> Tensor:
        k = self.concentration
        return (math.log(2 * math.pi) + bessel_i_op(k, 0, True).log() + k
                - k * self._bessel_ratio())


class LowRankMultivariateNormal(MultivariateNormal):
    """N(loc, W W^T + diag(D)), W = `cov_factor` (n, rank) and D = `cov_diag` (n,).

    Examples:
        >>> d = lm.distributions.LowRankMultivariateNormal(lm.zeros(2), lm.ones(2, 1),
        ...                                                lm.ones(2))
        >>> d.variance
        tensor([2., 2.])
    """

    arg_constraints: dict[str, Any] = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector

    def __init__(self, loc: Any, cov_factor: Any, cov_diag: Any,
                 validate_args: bool | None = None) -> None:
        loc = param(loc)
        self.cov_factor, self.cov_diag = param(cov_factor, loc), param(cov_diag, loc)
        if self.cov_factor.ndim < 2 or self.cov_factor.shape[-2] != loc.shape[-1]:
            raise ValueError(f"LowRankMultivariateNormal: cov_factor must be (..., "
                             f"{loc.shape[-1]}, rank) for loc of shape {tuple(loc.shape)}; "
                             f"got {tuple(self.cov_factor.shape)}")
        covariance = self.cov_factor @ self.cov_factor.mT + self.cov_diag.diag_embed()
        super().__init__(loc, covariance_matrix=covariance, validate_args=validate_args)

    @property
    def variance(self) -> Tensor:
        return (self.cov_factor.pow(2).sum(-1) + self.cov_diag).expand(*self.batch_shape,
                                                                        *self.event_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """loc + W e1 + sqrt(D) e2, e1 and e2 standard normal draws, as PyTorch's."""
        shape = self._extended(sample_shape)
        rank = self.cov_factor.shape[-1]
        e1 = randn(*shape[:-1], rank, dtype=self.loc.dtype)
        e2 = randn(*shape, dtype=self.loc.dtype)
        return self.loc + (self.cov_factor @ e1.unsqueeze(-1)).squeeze(-1) + \
            self.cov_diag.sqrt() * e2


__all__ = ["LowRankMultivariateNormal", "VonMises"]
