"""The relaxed laws before their last squashing, as PyTorch builds RelaxedBernoulli and
RelaxedOneHotCategorical on them: LogitRelaxedBernoulli (the logit of a relaxed Bernoulli
draw) and ExpRelaxedCategorical (the log of a relaxed one-hot draw), whose densities are
better behaved for small temperatures."""

from __future__ import annotations

import math
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.distributions import constraints
from lamina.distributions.continuous import open_uniform
from lamina.distributions.discrete import Bernoulli, Categorical
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.relaxed import _ProbsOf
from lamina.functions import softplus


class LogitRelaxedBernoulli(_ProbsOf, Distribution):
    """(logits + log u - log(1 - u)) / temperature for u uniform on (0, 1).

    Examples:
        >>> d = lm.distributions.LogitRelaxedBernoulli(lm.tensor(0.5), probs=lm.tensor([0.3]))
        >>> d.log_prob(lm.tensor([0.0]))
        tensor([-2.2538])
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True
    _shown = ("temperature", "probs")

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._base = Bernoulli(probs, logits, validate_args)
        self.temperature = param(temperature, self._base.logits)
        super().__init__(tuple(self._base.batch_shape), (), validate_args)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = open_uniform(self, sample_shape, self.logits, floor="eps")  # clamp_probs
        return (self.logits + u.log() - (-u).log1p()) / self.temperature

    def log_prob(self, value: Any) -> Tensor:
        diff = self.logits - param(value, self.logits) * self.temperature
        return self.temperature.log() + diff - 2 * softplus(diff)


class ExpRelaxedCategorical(_ProbsOf, Distribution):
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
    has_rsample = True
    _shown = ("temperature", "probs")

    def __init__(self, temperature: Any, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._base = Categorical(probs, logits, validate_args)
        self.temperature = param(temperature, self._base.logits)
        k = self._base.logits.shape[-1]
        super().__init__(tuple(self._base.batch_shape), (k,), validate_args)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = open_uniform(self, sample_shape, self.logits, floor="eps")  # clamp_probs
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value: Any) -> Tensor:
        k = self._base.logits.shape[-1]
        score = self.logits - param(value, self.logits) * self.temperature
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + math.lgamma(k) + (k - 1) * self.temperature.log()
