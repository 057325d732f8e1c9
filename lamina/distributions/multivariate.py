"""Distributions over vectors: MultivariateNormal (by covariance, precision or its
Cholesky factor), OneHotCategorical, and Independent, which turns batch dims of any
distribution into event dims."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation_random import randn
from lamina.distributions import constraints
from lamina.distributions.discrete import Categorical
from lamina.distributions.distribution import Distribution, param
from lamina.dtypes import Size


def scale_tril_of(law: str, covariance_matrix: Any, precision_matrix: Any, scale_tril: Any,
                  like: Tensor | None = None) -> Tensor:
    """The Cholesky factor of a covariance given by exactly one of the three forms."""
    import lamina.linalg as linalg

    given = [m is not None for m in (covariance_matrix, precision_matrix, scale_tril)]
    if sum(given) != 1:
        raise ValueError(f"{law}: give exactly one of covariance_matrix, precision_matrix, "
                         "scale_tril")
    if scale_tril is not None:
        return param(scale_tril, like)
    if covariance_matrix is not None:
        return linalg.cholesky(param(covariance_matrix, like))
    return linalg.cholesky(linalg.inv(param(precision_matrix, like)))


class MultivariateNormal(Distribution):
    """N(loc, Sigma) over the last axis, Sigma given as `covariance_matrix`,
    `precision_matrix` or `scale_tril` (its lower Cholesky factor L: Sigma = L L^T).

    Examples:
        >>> d = lm.distributions.MultivariateNormal(lm.zeros(2), lm.eye(2))
        >>> d.log_prob(lm.zeros(2)), d.rsample((3,)).shape
        (tensor(-1.8379), lamina.Size([3, 2]))
    """

    arg_constraints: dict[str, Any] = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector

    has_rsample = True
    _shown = ("loc",)

    def __init__(self, loc: Any, covariance_matrix: Any = None, precision_matrix: Any = None,
                 scale_tril: Any = None, validate_args: bool | None = None) -> None:
        loc = param(loc)
        if loc.ndim < 1:
            raise ValueError("MultivariateNormal: loc must be at least one-dimensional")
        L = scale_tril_of("MultivariateNormal", covariance_matrix, precision_matrix,
                          scale_tril, loc)
        batch = np.broadcast_shapes(tuple(loc.shape[:-1]), tuple(L.shape[:-2]))
        n = loc.shape[-1]
        self.loc = loc.expand(*batch, n)
        self._unbroadcasted_scale_tril = L
        self.scale_tril = L.expand(*batch, n, n)
        super().__init__(batch, (n,), validate_args)

    @property
    def covariance_matrix(self) -> Tensor:
        return self.scale_tril @ self.scale_tril.mT

    @property
    def precision_matrix(self) -> Tensor:
        return self.scale_tril.cholesky_inverse()

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale_tril.pow(2).sum(-1)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = randn(*self._extended(sample_shape), dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Tensor:
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value: Any) -> Tensor:
        import lamina.linalg as linalg

        diff = param(value, self.loc) - self.loc
        L = self._unbroadcasted_scale_tril.expand(*diff.shape[:-1], *self.event_shape * 2)
        z = linalg.solve_triangular(L, diff.unsqueeze(-1), upper=False).squeeze(-1)
        k = self.event_shape[0]
        return -0.5 * (k * math.log(2 * math.pi) + z.pow(2).sum(-1)) - self._half_log_det()

    def entropy(self) -> Tensor:
        k = self.event_shape[0]
        h = 0.5 * k * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(*self.batch_shape) if len(self.batch_shape) else h


class OneHotCategorical(Distribution):
    """Categorical, its outcomes one-hot vectors over the last axis.

    Examples:
        >>> d = lm.distributions.OneHotCategorical(probs=lm.tensor([0.25, 0.75]))
        >>> d.sample().sum(), d.log_prob(lm.tensor([0.0, 1.0]))
        (tensor(1.), tensor(-0.2877))
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot

    _shown = ("probs",)

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._categorical = Categorical(probs, logits, validate_args)
        n = self._categorical.probs.shape[-1]
        super().__init__(tuple(self._categorical.batch_shape), (n,), validate_args)

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        from lamina.functions import one_hot

        return one_hot(self.probs.argmax(-1), self.event_shape[0]).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def _draw(self, shape: Any) -> Tensor:
        from lamina.functions import one_hot

        index = self._categorical._draw(Size(tuple(shape)[:-1]))
        return one_hot(index, self.event_shape[0]).to(self.probs.dtype)

    def log_prob(self, value: Any) -> Tensor:
        return self._categorical.log_prob(param(value, self.probs).argmax(-1))

    def entropy(self) -> Tensor:
        return self._categorical.entropy()


class Independent(Distribution):
    """`base_distribution` with its last `reinterpreted_batch_ndims` batch dims read as
    event dims: log_prob and entropy sum over them (a diagonal Gaussian over vectors is
    Independent(Normal(mu, sigma), 1)).

    Examples:
        >>> d = lm.distributions.Independent(lm.distributions.Normal(lm.zeros(3), 1.0), 1)
        >>> d.batch_shape, d.event_shape, d.log_prob(lm.zeros(3))
        (lamina.Size([]), lamina.Size([3]), tensor(-2.7568))
    """

    arg_constraints: dict[str, Any] = {}

    @constraints.dependent_property
    def support(self) -> Any:
        return constraints.independent(self.base_dist.support, self.reinterpreted_batch_ndims)

    def __init__(self, base_distribution: Distribution, reinterpreted_batch_ndims: int,
                 validate_args: bool | None = None) -> None:
        n = reinterpreted_batch_ndims
        batch = tuple(base_distribution.batch_shape)
        if n > len(batch):
            raise ValueError(f"Independent: reinterpreted_batch_ndims ({n}) must be at most "
                             f"the base's batch dims {batch}")
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, n
        cut = len(batch) - n
        super().__init__(batch[:cut], batch[cut:] + tuple(base_distribution.event_shape),
                         validate_args)

    @property
    def has_rsample(self) -> bool:  # type: ignore[override]
        return self.base_dist.has_rsample

    @property
    def mean(self) -> Tensor:
        return self.base_dist.mean

    @property
    def mode(self) -> Tensor:
        return self.base_dist.mode

    @property
    def variance(self) -> Tensor:
        return self.base_dist.variance

    def sample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.base_dist.rsample(sample_shape)

    def _summed(self, t: Tensor) -> Tensor:
        n = self.reinterpreted_batch_ndims
        return t.sum(tuple(range(-n, 0))) if n else t

    def log_prob(self, value: Any) -> Tensor:
        return self._summed(self.base_dist.log_prob(value))

    def entropy(self) -> Tensor:
        return self._summed(self.base_dist.entropy())

    def __repr__(self) -> str:
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
