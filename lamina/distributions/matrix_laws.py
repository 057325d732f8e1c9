"""Laws over matrices: Wishart (positive-definite matrices, a Gaussian sample covariance's
law, drawn by Bartlett's decomposition) and LKJCholesky (Cholesky factors of correlation
matrices, the prior of Lewandowski, Kurowicka and Joe, drawn by the onion method)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import arange, as_tensor
from lamina.creation_random import randn
from lamina.distributions import constraints
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.gamma_family import Beta, Chi2
from lamina.distributions.multivariate import scale_tril_of
from lamina.functions.math import where
from lamina.type_info import finfo

_LOG_2 = math.log(2.0)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    """The derivative of the multivariate log-gamma: sum of digamma(x - i / 2), i < p."""
    return (x.unsqueeze(-1) - arange(p, dtype=x.dtype) / 2).digamma().sum(-1)


class Wishart(Distribution):
    """The Wishart law of df degrees of freedom and a scale matrix (its covariance, precision
    or Cholesky factor): sum of df outer products of N(0, covariance) vectors.

    Examples:
        >>> d = lm.distributions.Wishart(lm.tensor(4.0), covariance_matrix=lm.eye(2))
        >>> d.mean, d.log_prob(lm.eye(2) * 2)
        (tensor([[4., 0.],
                [0., 4.]]), tensor(-4.5310))
    """

    arg_constraints: dict[str, Any] = {
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky, "df": constraints.greater_than(0)}
    support = constraints.positive_definite
    has_rsample = True
    _shown = ("df",)

    def __init__(self, df: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: bool | None = None) -> None:
        L = scale_tril_of("Wishart", covariance_matrix, precision_matrix, scale_tril)
        if L.ndim < 2:
            raise ValueError("Wishart: the scale must be at least two-dimensional, with "
                             "optional leading batch dimensions")
        df = param(df, L)
        batch = np.broadcast_shapes(tuple(L.shape[:-2]), tuple(df.shape))
        p = L.shape[-1]
        self.df = df.expand(*batch)
        if (self.df.detach().numpy() <= p - 1).any():
            raise ValueError(f"Wishart: df={df} must be greater than ndim - 1 = {p - 1}")
        if (self.df.detach().numpy() < p).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", UserWarning, stacklevel=2)
        self._unbroadcasted_scale_tril = L
        self.scale_tril = L.expand(*batch, p, p)
        super().__init__(batch, (p, p), validate_args)
        self._chi2 = Chi2(self.df.unsqueeze(-1) - arange(p, dtype=L.dtype).expand(*batch, p),
                          validate_args=False)

    @property
    def covariance_matrix(self) -> Tensor:
        return self.scale_tril @ self.scale_tril.mT

    @property
    def precision_matrix(self) -> Tensor:
        return self.scale_tril.cholesky_inverse()

    def _df(self) -> Tensor:
        return self.df.reshape(*self.batch_shape, 1, 1)

    @property
    def mean(self) -> Tensor:
        return self._df() * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.event_shape[-1] - 1
        factor = where(factor > 0, factor, math.nan)
        return factor.reshape(*self.batch_shape, 1, 1) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        diag = v.diagonal(dim1=-2, dim2=-1)
        return self._df() * (v ** 2 + diag.unsqueeze(-1) * diag.unsqueeze(-2))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Bartlett's decomposition: L A A^T L^T for A lower triangular, chi draws on its
        diagonal and standard normals below."""
        shape = self._extended(sample_shape)
        diag = self._chi2.rsample(sample_shape).sqrt()
        diag = diag.clamp(min=finfo(diag.dtype).eps)
        below = randn(*shape, dtype=diag.dtype).tril(-1)
        chol = self._unbroadcasted_scale_tril @ (below + diag.diag_embed())
        return chol @ chol.mT

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.df)
        nu, p, L = self.df, self.event_shape[-1], self._unbroadcasted_scale_tril
        half_log_det = L.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = value.cholesky_solve(L).diagonal(dim1=-2, dim2=-1).sum(-1)
        _, log_det = value.slogdet()
        return (-nu * (p * _LOG_2 / 2 + half_log_det) - (nu / 2).mvlgamma(p)
                + (nu - p - 1) / 2 * log_det - trace / 2)

    def entropy(self) -> Tensor:
        nu, p = self.df, self.event_shape[-1]
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + half_log_det) + (nu / 2).mvlgamma(p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p) + nu * p / 2)


class LKJCholesky(Distribution):
    """The LKJ prior over dim x dim correlation matrices, density proportional to
    det(C)^(concentration - 1), given by their Cholesky factors.

    Examples:
        >>> d = lm.distributions.LKJCholesky(3, 0.5)
        >>> d.log_prob(lm.eye(3))
        tensor(-2.5310)
    """

    arg_constraints: dict[str, Any] = {"concentration": constraints.positive}
    support = constraints.corr_cholesky
    _shown = ("concentration",)

    def __init__(self, dim: int, concentration: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        self.concentration = param(concentration)
        super().__init__(tuple(self.concentration.shape), (dim, dim), validate_args)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = as_tensor(np.concatenate([[0.0], np.arange(dim - 1)]),
                           dtype=self.concentration.dtype)
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset,
                          validate_args=False)

    def _draw(self, shape: Any) -> Tensor:
        """The onion method: row i a point of the i-ball of Beta-distributed squared radius,
        completed to unit norm by its diagonal."""
        sample_shape = tuple(shape[:len(shape) - len(self.batch_shape) - 2])
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        normal = randn(*shape, dtype=y.dtype).tril(-1)
        norm = normal.norm(dim=-1, keepdim=True)
        direction = normal / where(norm > 0, norm, 1.0)  # the first row stays 0
        w = y.sqrt() * direction
        diag = (1 - (w ** 2).sum(-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
        return w + diag.diag_embed()

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.concentration)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - arange(
            2, self.dim + 1, dtype=value.dtype)
        unnormalised = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normaliser = (0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(dm1)
                      - alpha.lgamma() * dm1)
        return unnormalised - normaliser
