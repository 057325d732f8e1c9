"""Laws on the unit interval and the simplex built from others: ContinuousBernoulli (the
continuous relaxation of a Bernoulli, normalised, Loaiza-Ganem and Cunningham 2019) and
LogisticNormal (a Normal sent through the stick-breaking transform)."""

from __future__ import annotations

import math
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.creation_random import rand
from lamina.distributions import constraints
from lamina.distributions.discrete import _one_of
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.normal import Normal
from lamina.distributions.transformed import TransformedDistribution
from lamina.distributions.transforms_structured import StickBreakingTransform
from lamina.distributions.utils import clamp_probs, logits_to_probs, probs_to_logits
from lamina.functions import binary_cross_entropy_with_logits
from lamina.functions.math import where
from lamina.tensor_functions import broadcast_tensors


class ContinuousBernoulli(Distribution):
    """Density C(p) p^x (1 - p)^(1 - x) on [0, 1], normalised by C(p); near p = 1/2 (inside
    `lims`) its moments and normaliser are Taylor series, as PyTorch's.

    Examples:
        >>> d = lm.distributions.ContinuousBernoulli(probs=lm.tensor([0.2]))
        >>> d.mean, d.log_prob(lm.tensor([0.5]))
        (tensor([0.3880]), tensor([-0.0788]))
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _shown = ("probs",)

    def __init__(self, probs: Any = None, logits: Any = None,
                 lims: tuple[float, float] = (0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits, "ContinuousBernoulli")
        given = param(probs if logits is None else logits)
        super().__init__(tuple(given.shape), (), validate_args)
        if probs is not None:
            p = given.detach().numpy()
            self._check((p >= 0) & (p <= 1), "probs must be in [0, 1]")
            self.probs = clamp_probs(given)
            self.logits = probs_to_logits(self.probs, is_binary=True)
        else:
            self.logits = given
            self.probs = clamp_probs(logits_to_probs(given, is_binary=True))
        self._lims = lims

    def _outside(self) -> Tensor:
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self) -> Tensor:
        return where(self._outside(), self.probs, self._lims[0])

    def _log_norm(self) -> Tensor:
        p = self._cut_probs()
        below = where(p <= 0.5, p, 0.0)
        above = where(p >= 0.5, p, 1.0)
        exact = ((-p).log1p() - p.log()).abs().log() - where(
            p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5) ** 2
        return where(self._outside(), exact, math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x)

    @property
    def mean(self) -> Tensor:
        p = self._cut_probs()
        exact = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        return where(self._outside(), exact, 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x)

    @property
    def variance(self) -> Tensor:
        p = self._cut_probs()
        exact = p * (p - 1.0) / (1.0 - 2.0 * p) ** 2 + 1.0 / ((-p).log1p() - p.log()) ** 2
        x = (self.probs - 0.5) ** 2
        return where(self._outside(), exact, 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.icdf(rand(*self._extended(sample_shape), dtype=self.probs.dtype))

    def log_prob(self, value: Any) -> Tensor:
        logits, value = broadcast_tensors(self.logits, param(value, self.probs))
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._log_norm())

    def cdf(self, value: Any) -> Tensor:
        value = param(value, self.probs)
        p = self._cut_probs()
        exact = (p ** value * (1.0 - p) ** (1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = where(self._outside(), exact, value)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, inside))

    def icdf(self, value: Any) -> Tensor:
        value = param(value, self.probs)
        p = self._cut_probs()
        exact = (((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p())
                 / (p.log() - (-p).log1p()))
        return where(self._outside(), exact, value)

    def entropy(self) -> Tensor:
        log0, log1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log0 - log1) - self._log_norm() - log0


class LogisticNormal(TransformedDistribution):
    """A Normal(loc, scale) vector of K - 1 sent by stick-breaking onto the K-simplex.

    Examples:
        >>> d = lm.distributions.LogisticNormal(lm.zeros(2), lm.ones(2))
        >>> d.event_shape, d.log_prob(lm.tensor([0.2, 0.3, 0.5]))
        (lamina.Size([3]), tensor(1.2980))
    """

    arg_constraints: dict[str, Any] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    _shown = ("loc", "scale")

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = Normal(base.loc.reshape(1), base.scale.reshape(1),
                          validate_args=validate_args)
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale
