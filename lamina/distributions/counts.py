"""Counting distributions: `Geometric` (failures before the first success), `Binomial`
(successes in `total_count` trials) and `Multinomial` (counts of each category in
`total_count` draws), with PyTorch's parameters (`probs=` or `logits=`) and formulas."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.creation_random import rand
from lamina.distributions import constraints
from lamina.distributions.discrete import Categorical, _one_of
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.utils import clamp_probs
from lamina.functions import binary_cross_entropy_with_logits
from lamina.random import numpy_rng
from lamina.tensor_functions import broadcast_tensors, where


def _binary(probs: Any, logits: Any, name: str, *more: Any) -> tuple[Tensor, ...]:
    """(probs, logits, *more) broadcast, each derived from the other as PyTorch does."""
    _one_of(probs, logits, name)
    given = param(probs if logits is None else logits)
    given, *rest = broadcast_tensors(given, *(param(m, given) for m in more))
    if logits is None:
        return (given, clamp_probs(given).log() - clamp_probs(1 - given).log(), *rest)
    return (given.sigmoid(), given, *rest)


class Geometric(Distribution):
    """The number of failures before the first success, each trial a success with
    `probs` (or sigmoid(`logits`)).

    Examples:
        >>> d = lm.distributions.Geometric(probs=lm.tensor([0.25]))
        >>> d.mean, d.log_prob(lm.tensor([0.0]))
        (tensor([3.]), tensor([-1.3863]))
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real}
    support = constraints.nonnegative_integer

    _shown = ("probs",)

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self.probs, self.logits = _binary(probs, logits, "Geometric")
        super().__init__(tuple(self.probs.shape), (), validate_args)
        p = self.probs.detach().numpy()
        self._check((p > 0) & (p <= 1), f"probs must lie in (0, 1]; got {p}")

    @property
    def mean(self) -> Tensor:
        return 1 / self.probs - 1

    @property
    def mode(self) -> Tensor:
        return self.probs * 0

    @property
    def variance(self) -> Tensor:
        return (1 / self.probs - 1) / self.probs

    def _draw(self, shape: Any) -> Tensor:
        u = rand(*shape, dtype=self.probs.dtype).clamp(min=float(np.finfo(self.probs.dtype).tiny))
        return (u.log() / (-self.probs.detach()).log1p()).floor()

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.probs)
        v = value.detach().numpy()
        self._check((v >= 0) & (v == np.round(v)), f"value must be a count >= 0; got {v}")
        value, probs = broadcast_tensors(value, self.probs)
        # a certain success and no failure: 0 log 0 is 0, not NaN
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs


def _clamp_by_zero(x: Tensor) -> Tensor:
    """max(x, 0) whose gradient at 0 is 1/2, as PyTorch's binomial uses."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(Distribution):
    """The number of successes in `total_count` trials, each a success with `probs` (or
    sigmoid(`logits`)).

    Examples:
        >>> d = lm.distributions.Binomial(4, probs=lm.tensor([0.5]))
        >>> d.mean, d.log_prob(lm.tensor([2.0])).exp()
        (tensor([2.]), tensor([0.3750]))
    """

    arg_constraints: dict[str, Any] = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real}

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self.total_count)

    _shown = ("total_count", "probs")

    def __init__(self, total_count: Any = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self.probs, self.logits, self.total_count = _binary(probs, logits, "Binomial",
                                                            total_count)
        super().__init__(tuple(self.probs.shape), (), validate_args)
        n = self.total_count.numpy()
        self._check((n >= 0) & (n == np.round(n)), f"total_count must be a count; got {n}")

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def _draw(self, shape: Any) -> Tensor:
        n = np.broadcast_to(self.total_count.numpy(), shape).astype(np.int64)
        p = np.broadcast_to(self.probs.detach().numpy(), shape)
        return as_tensor(numpy_rng().binomial(n, p).astype(self.probs.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.probs)
        n, logits = self.total_count, self.logits
        v = value.detach().numpy()
        self._check((v >= 0) & (v <= n.numpy()) & (v == np.round(v)),
                    f"value must be a count in [0, total_count]; got {v}")
        normaliser = (n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
                      - (n + 1).lgamma())
        return value * logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normaliser

    def enumerate_support(self, expand: bool = True) -> Tensor:
        n = self.total_count.numpy()
        if n.size and n.min() != n.max():
            raise NotImplementedError("Binomial: the support of unequal total_counts is not "
                                      "one tensor (nor is it in PyTorch)")
        values = as_tensor(np.arange(int(n.max()) + 1 if n.size else 1,
                                     dtype=self.probs.dtype)).reshape(
            (-1,) + (1,) * len(self.batch_shape))
        return values.expand(-1, *self.batch_shape) if expand else values

    def entropy(self) -> Tensor:
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)


class Multinomial(Distribution):
    """Counts of each of K categories in `total_count` draws with the probabilities on the
    last axis of `probs` (or `logits`); the event is that axis.

    Examples:
        >>> d = lm.distributions.Multinomial(2, probs=lm.tensor([0.5, 0.5]))
        >>> d.log_prob(lm.tensor([1.0, 1.0])).exp()
        tensor(0.5000)
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1)}

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self) -> Any:
        return constraints.multinomial(self.total_count)

    def __init__(self, total_count: int = 1, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, (int, np.integer)):
            raise NotImplementedError("Multinomial: total_count must be one int, as PyTorch "
                                      "requires")
        self.total_count = int(total_count)
        self._categorical = Categorical(probs=probs, logits=logits, validate_args=validate_args)
        self.probs, self.logits = self._categorical.probs, self._categorical.logits
        self._binomial = Binomial(self.total_count, probs=self.probs)
        super().__init__(tuple(self._categorical.batch_shape), tuple(self.probs.shape[-1:]),
                         validate_args)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def _draw(self, shape: Any) -> Tensor:
        p = np.broadcast_to(self.probs.detach().numpy().astype(np.float64), shape)
        counts = numpy_rng().multinomial(self.total_count, p / p.sum(-1, keepdims=True))
        return as_tensor(counts.astype(self.probs.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.probs)
        v = value.detach().numpy()
        self._check((v >= 0) & (v == np.round(v)), f"value must hold counts; got {v}")
        logits, value = broadcast_tensors(self.logits, value)
        # a category that cannot occur and did not: 0 * -inf is 0
        logits = where((value == 0) & (logits == -np.inf), 0.0, logits)
        return ((value.sum(-1) + 1).lgamma() - (value + 1).lgamma().sum(-1)
                + (logits * value).sum(-1))

    def entropy(self) -> Tensor:
        n = as_tensor(float(self.total_count), dtype=self.probs.dtype)
        support = self._binomial.enumerate_support(False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        return (n * self._categorical.entropy() - (n + 1).lgamma()
                + (binomial_probs * (support + 1).lgamma()).sum(0).sum(-1))
