"""Discrete distributions: `Categorical(probs=|logits=)` over the last axis and
`Bernoulli(probs=|logits=)`, elementwise. Either parameter may be given; the other is
derived from it as PyTorch derives it (probabilities clamped away from 0 and 1 before the
log, logits normalised by their log-sum-exp)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.creation_random import bernoulli, multinomial
from lamina.distributions import constraints
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.utils import clamp_probs
from lamina.functions import binary_cross_entropy_with_logits
from lamina.tensor_functions import broadcast_tensors


def _one_of(probs: Any, logits: Any, name: str) -> None:
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: give either probs or logits, not both and not neither")


class Categorical(Distribution):
    """Categories 0 .. K-1 with the probabilities on the last axis of `probs` (normalised
    to sum to 1) or `logits` (unnormalised log-probabilities); batch_shape is the rest.

    Examples:
        >>> d = lm.distributions.Categorical(probs=lm.tensor([0.25, 0.75]))
        >>> d.sample((3,)).shape, d.entropy()
        (lamina.Size([3]), tensor(0.5623...))
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.simplex,
        "logits": constraints.independent(constraints.real, 1)}

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self) -> Any:
        return constraints.integer_interval(0, self._num_events - 1)

    _shown = ("probs", "logits")

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits, "Categorical")
        given = param(probs if logits is None else logits)
        if given.ndim < 1:
            raise ValueError("Categorical: probs or logits must have at least one dimension")
        super().__init__(tuple(given.shape[:-1]), (), validate_args)
        if logits is None:
            self._check(given.detach().numpy() >= 0, "probs must be non-negative")
            self.probs = given / given.sum(-1, keepdim=True)
            self.logits = clamp_probs(self.probs).log()
        else:
            self.logits = given - given.logsumexp(-1, keepdim=True)
            self.probs = self.logits.softmax(-1)
        self._num_events = given.shape[-1]

    @property
    def param_shape(self) -> Any:
        return self.probs.shape

    @property
    def mean(self) -> Tensor:
        return as_tensor(np.full(self.batch_shape, np.nan, self.probs.dtype))

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(-1)

    @property
    def variance(self) -> Tensor:
        return self.mean

    def _draw(self, shape: Any) -> Tensor:
        flat = self.probs.reshape(-1, self._num_events)
        n = int(np.prod(shape[: len(shape) - len(self.batch_shape)], dtype=np.int64))
        draws = multinomial(flat, n, replacement=True)  # (batch, n)
        return draws.t().reshape(shape)

    def log_prob(self, value: Any) -> Tensor:
        value = value if isinstance(value, Tensor) else as_tensor(value)
        v = value.detach().numpy()
        self._check((v >= 0) & (v < self._num_events) & (v == np.round(v)),
                    f"value must be an integer in [0, {self._num_events}); got {v}")
        index = value.long().unsqueeze(-1)
        index, log_pmf = broadcast_tensors(index, self.logits)
        return log_pmf.gather(-1, index[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=float(np.finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = as_tensor(np.arange(self._num_events)).reshape(
            (-1,) + (1,) * len(self.batch_shape))
        return values.expand(-1, *self.batch_shape) if expand else values


class Bernoulli(Distribution):
    """1 with probability `probs` (or sigmoid(`logits`)), else 0, elementwise.

    Examples:
        >>> lm.distributions.Bernoulli(probs=lm.tensor([0.5])).log_prob(lm.tensor([1.0]))
        tensor([-0.6931...])
    """

    arg_constraints: dict[str, Any] = {
        "probs": constraints.unit_interval,
        "logits": constraints.real}
    support = constraints.boolean

    _shown = ("probs",)

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        _one_of(probs, logits, "Bernoulli")
        given = param(probs if logits is None else logits)
        super().__init__(tuple(given.shape), (), validate_args)
        if logits is None:
            self.probs = given
            p = given.detach().numpy()
            self._check((p >= 0) & (p <= 1), f"probs must lie in [0, 1]; got {p}")
            self.logits = clamp_probs(given).log() - clamp_probs(1 - given).log()
        else:
            self.logits, self.probs = given, given.sigmoid()

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return (self.probs >= 0.5).to(self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def _draw(self, shape: Any) -> Tensor:
        return bernoulli(self.probs.expand(*shape))

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.logits)
        v = value.detach().numpy()
        self._check((v == 0) | (v == 1), f"value must be 0 or 1; got {v}")
        logits, value = broadcast_tensors(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = as_tensor(np.arange(2, dtype=self.probs.dtype)).reshape(
            (-1,) + (1,) * len(self.batch_shape))
        return values.expand(-1, *self.batch_shape) if expand else values
