"""Continuous relaxations of discrete draws, for gradients through them: RelaxedBernoulli
and RelaxedOneHotCategorical (the Concrete / Gumbel-softmax laws of Maddison et al. and
Jang et al., 2017) with their logit-space forms LogitRelaxedBernoulli and
ExpRelaxedCategorical, and OneHotCategoricalStraightThrough (hard draws, the
probabilities' gradient); and NegativeBinomial, a count law of a gamma-mixed Poisson."""

from __future__ import annotations

import math
from typing import Any

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.distributions import constraints
from lamina.distributions.continuous import open_uniform
from lamina.distributions.discrete import Bernoulli, Categorical, _one_of
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.gamma_family import Gamma, Poisson
from lamina.distributions.multivariate import OneHotCategorical
from lamina.functions import softplus
from lamina.functions.math import where


class _ProbsOf:
    """probs and logits, those of the discrete law (`_base`) this one is built on."""

    _base: Any

    @property
    def probs(self) -> Tensor:
        return self._base.probs

    @property
    def logits(self) -> Tensor:
        return self._base.logits


class _Relaxed(_ProbsOf, Distribution):
    """What the relaxed laws share: a discrete law's probs or logits (`_discrete`,
    Bernoulli or Categorical), a temperature, and their logit-space draws."""

    _discrete: Any
    _shown = ("temperature", "probs")
    has_rsample = True

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._base = self._discrete(probs, logits, validate_args)
        self.temperature = param(temperature, self._base.logits)
        event = (self._base.logits.shape[-1],) if self._discrete is Categorical else ()
        super().__init__(tuple(self._base.batch_shape), event, validate_args)

    def _logistic(self, sample_shape: Any) -> Tensor:
        """(logits + log u - log(1 - u)) / temperature for u uniform: a binary law's."""
        u = open_uniform(self, sample_shape, self.logits, floor="eps")  # clamp_probs
        return (self.logits + u.log() - (-u).log1p()) / self.temperature

    def _gumbel_scores(self, sample_shape: Any) -> Tensor:
        """(logits + g) / temperature for standard Gumbel draws g: a categorical law's."""
        u = open_uniform(self, sample_shape, self.logits, floor="eps")  # clamp_probs
        return (self.logits - (-u.log()).log()) / self.temperature

    def _logistic_log_prob(self, y: Tensor) -> Tensor:
        diff = self.logits - y * self.temperature
        return self.temperature.log() + diff - 2 * softplus(diff)

    def _gumbel_log_prob(self, y: Tensor) -> Tensor:
        """The density of log softmax((logits + g) / temperature) at y."""
        k = self.logits.shape[-1]
        score = self.logits - y * self.temperature
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + math.lgamma(k) + (k - 1) * self.temperature.log()


class RelaxedBernoulli(_Relaxed):
    """sigmoid((logits + log u - log(1 - u)) / temperature) for u uniform: values in
    (0, 1) that approach Bernoulli(logits) draws as the temperature goes to 0.

    Examples:
        >>> d = lm.distributions.RelaxedBernoulli(lm.tensor(0.5), probs=lm.tensor([0.3]))
        >>> d.log_prob(lm.tensor([0.2]))
        tensor([-0.2528])
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real}
    support = constraints.unit_interval
    _discrete = Bernoulli

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._logistic(sample_shape).sigmoid()

    def log_prob(self, value: Any) -> Tensor:
        x = param(value, self.logits)
        y = x.log() - (-x).log1p()  # the logistic draw the value came from
        # less log |d sigmoid(y) / dy|
        return self._logistic_log_prob(y) + softplus(y) + softplus(-y)


class LogitRelaxedBernoulli(_Relaxed):
    """(logits + log u - log(1 - u)) / temperature for u uniform on (0, 1): the logit of a
    RelaxedBernoulli draw.

    Examples:
        >>> d = lm.distributions.LogitRelaxedBernoulli(lm.tensor(0.5), probs=lm.tensor([0.3]))
        >>> d.log_prob(lm.tensor([0.0]))
        tensor([-2.2538])
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    _discrete = Bernoulli

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._logistic(sample_shape)

    def log_prob(self, value: Any) -> Tensor:
        return self._logistic_log_prob(param(value, self.logits))


class RelaxedOneHotCategorical(_Relaxed):
    """softmax((logits + g) / temperature) for g standard Gumbel draws: points of the
    simplex that approach one-hot Categorical(logits) draws as the temperature goes to 0.

    Examples:
        >>> d = lm.distributions.RelaxedOneHotCategorical(lm.tensor(1.0), logits=lm.zeros(3))
        >>> round(d.rsample().sum().item(), 4)
        1.0
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1)}
    support = constraints.simplex
    _discrete = Categorical

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._gumbel_scores(sample_shape).softmax(-1)

    def log_prob(self, value: Any) -> Tensor:
        y = param(value, self.logits).log()
        return self._gumbel_log_prob(y) - y.sum(-1)  # less the log-Jacobian of exp


class ExpRelaxedCategorical(_Relaxed):
    """log softmax((logits + g) / temperature) for standard Gumbel draws g: a point whose
    exponential lies on the simplex.

    Examples:
        >>> d = lm.distributions.ExpRelaxedCategorical(lm.tensor(1.0), logits=lm.zeros(3))
        >>> d.log_prob(lm.log(lm.tensor([0.2, 0.3, 0.5])))
        tensor(-2.8064)
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.real_vector
    _discrete = Categorical

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        scores = self._gumbel_scores(sample_shape)
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value: Any) -> Tensor:
        return self._gumbel_log_prob(param(value, self.logits))


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample is a hard one-hot draw in the forward pass and
    carries the probabilities' gradient (the straight-through estimator).

    Examples:
        >>> p = lm.tensor([0.2, 0.8], requires_grad=True)
        >>> d = lm.distributions.OneHotCategoricalStraightThrough(probs=p)
        >>> d.rsample().requires_grad
        True
    """

    has_rsample = True

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        with no_grad():
            hard = self._draw(self._extended(sample_shape))
        return hard + (self.probs - self.probs.detach())


class NegativeBinomial(_ProbsOf, Distribution):
    """The number of successes (probability `probs`, or sigmoid(`logits`)) before
    `total_count` failures.

    Examples:
        >>> d = lm.distributions.NegativeBinomial(3.0, probs=lm.tensor(0.5))
        >>> d.mean, d.log_prob(lm.tensor(2.0))
        (tensor(3.), tensor(-1.6740))
    """

    arg_constraints: dict[str, Any] = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real}
    support = constraints.nonnegative_integer

    _shown = ("total_count", "probs")

    def __init__(self, total_count: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits, "NegativeBinomial")
        self._base = Bernoulli(probs, logits, validate_args)
        self.total_count = param(total_count, self._base.logits).expand_as(self._base.logits)
        super().__init__(tuple(self._base.batch_shape), (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.logits.exp()

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.mean / (-self.logits).sigmoid()

    def _draw(self, shape: Any) -> Tensor:
        rates = Gamma(self.total_count, (-self.logits).exp()).sample(
            shape[:len(shape) - len(self.batch_shape)])
        return Poisson(rates).sample()

    def log_prob(self, value: Any) -> Tensor:
        k, r = param(value, self.logits), self.total_count
        unnormalised = r * softplus(self.logits).neg() + k * (-softplus(-self.logits))
        normaliser = (r + k).lgamma() - (1 + k).lgamma() - r.lgamma()
        # r + k = 0 (no failures asked for, none seen): probability 1
        normaliser = where((r + k) == 0, 0.0, normaliser)
        return unnormalised + normaliser
