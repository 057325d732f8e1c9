"""Continuous distributions: `Normal(loc, scale)` and `Uniform(low, high)`, both
reparameterised (`rsample` carries the gradient to the parameters)."""

from __future__ import annotations

import math
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.creation_random import rand, randn
from lamina.distributions import constraints
from lamina.distributions.distribution import Distribution, param
from lamina.tensor_functions import broadcast_tensors


class LocScale(Distribution):
    """A location-scale family, elementwise over the broadcast of loc and scale (scale > 0),
    reparameterised (Normal, and the laws of continuous.py)."""

    has_rsample = True
    _shown = ("loc", "scale")

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        loc = param(loc, scale if isinstance(scale, Tensor) else None)
        self.loc, self.scale = broadcast_tensors(loc, param(scale, loc))
        super().__init__(tuple(self.loc.shape), (), validate_args)
        self._check(self.scale.detach().numpy() > 0, "scale must be positive; got "
                    f"{self.scale.detach().numpy()}")

    @property
    def mode(self) -> Tensor:
        return self.loc


class Normal(LocScale):
    """The normal law N(loc, scale**2), elementwise over the broadcast of its parameters.

    Examples:
        >>> d = lm.distributions.Normal(lm.zeros(2), 1.0)
        >>> d.rsample((5,)).shape, d.log_prob(lm.zeros(2))
        (lamina.Size([5, 2]), tensor([-0.9189..., -0.9189...]))
    """

    arg_constraints: dict[str, Any] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        eps = randn(*self._extended(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.loc)
        return (-((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def cdf(self, value: Any) -> Tensor:
        value = param(value, self.loc)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value: Any) -> Tensor:
        value = param(value, self.loc)
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()

class Uniform(Distribution):
    """The uniform law on [low, high), elementwise over the broadcast of its bounds.

    Examples:
        >>> d = lm.distributions.Uniform(0.0, 4.0)
        >>> d.mean, d.log_prob(lm.tensor(1.0)).exp()
        (tensor(2.), tensor(0.2500))
    """

    arg_constraints: dict[str, Any] = {
        "low": constraints.dependent(is_discrete=False, event_dim=0),
        "high": constraints.dependent(is_discrete=False, event_dim=0)}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        return constraints.interval(self.low, self.high)

    has_rsample = True
    _shown = ("low", "high")

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        low = param(low, high if isinstance(high, Tensor) else None)
        self.low, self.high = broadcast_tensors(low, param(high, low))
        super().__init__(tuple(self.low.shape), (), validate_args)
        self._check(self.low.detach().numpy() < self.high.detach().numpy(),
                    "low must be below high")

    @property
    def mean(self) -> Tensor:
        return (self.low + self.high) / 2

    @property
    def mode(self) -> Tensor:
        return self.high * float("nan")  # every point is one, so none is (PyTorch's answer)

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = rand(*self._extended(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.low)
        v = value.detach().numpy()
        self._check((self.low.detach().numpy() <= v) & (v < self.high.detach().numpy()),
                    f"value must lie in [low, high); got {v}")
        return -(self.high - self.low).log() + value * 0

    def cdf(self, value: Any) -> Tensor:
        value = param(value, self.low)
        return ((value - self.low) / (self.high - self.low)).clamp(0, 1)

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()
