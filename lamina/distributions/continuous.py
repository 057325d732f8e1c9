"""More continuous distributions, each reparameterised (rsample carries the gradient to
the parameters) through its inverse CDF or a transform of a normal draw: Exponential,
Laplace, Cauchy, Gumbel, HalfNormal, LogNormal."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.creation_random import rand
from lamina.distributions import constraints
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.normal import LocScale, Normal
from lamina.tensor_functions import where

_EULER = 0.57721566490153286061


def open_uniform(d: Distribution, sample_shape: Any, like: Tensor, floor: str = "tiny"
                 ) -> Tensor:
    """Uniform draws in (0, 1) of d's sample shape, both ends kept away (a log or tan of
    them stays finite): below by the dtype's `floor` ("tiny", or "eps" as PyTorch's
    clamp_probs), above by its eps."""
    u = rand(*d._extended(sample_shape), dtype=like.dtype)
    info = np.finfo(like.dtype)
    return u.clamp(float(getattr(info, floor)), 1 - float(info.eps))


class Exponential(Distribution):
    """The exponential law of `rate`: density rate exp(-rate x) on x >= 0.

    Examples:
        >>> d = lm.distributions.Exponential(lm.tensor([2.0]))
        >>> d.mean, d.log_prob(lm.tensor([0.0]))
        (tensor([0.5000]), tensor([0.6931]))
    """

    arg_constraints: dict[str, Any] = {"rate": constraints.positive}
    support = constraints.nonnegative

    has_rsample = True
    _shown = ("rate",)

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        self.rate = param(rate)
        super().__init__(tuple(self.rate.shape), (), validate_args)
        self._check(self.rate.detach().numpy() > 0, "rate must be positive")

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return self.rate * 0

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return -(-open_uniform(self, sample_shape, self.rate)).log1p() / self.rate

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.rate)
        self._check(value.detach().numpy() >= 0, "value must be non-negative")
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Tensor:
        return 1 - (-self.rate * param(value, self.rate)).exp()

    def icdf(self, value: Any) -> Tensor:
        return -(-param(value, self.rate)).log1p() / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()


class Laplace(LocScale):
    """The Laplace law: density exp(-|x - loc| / scale) / (2 scale).

    Examples:
        >>> lm.distributions.Laplace(0.0, 1.0).log_prob(lm.tensor(0.0))
        tensor(-0.6931)
    """

    arg_constraints: dict[str, Any] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = open_uniform(self, sample_shape, self.loc) * 2 - 1
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.loc)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value: Any) -> Tensor:
        z = param(value, self.loc) - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value: Any) -> Tensor:
        term = param(value, self.loc) - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self) -> Tensor:
        return 1 + (2 * self.scale).log()


class Cauchy(LocScale):
    """The Cauchy law: density 1 / (pi scale (1 + ((x - loc) / scale)^2)); no mean.

    Examples:
        >>> lm.distributions.Cauchy(0.0, 1.0).cdf(lm.tensor(0.0))
        tensor(0.5000)
    """

    arg_constraints: dict[str, Any] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    @property
    def mean(self) -> Tensor:
        return as_tensor(np.full(tuple(self.loc.shape), np.nan, self.loc.dtype))

    @property
    def variance(self) -> Tensor:
        return as_tensor(np.full(tuple(self.loc.shape), np.inf, self.loc.dtype))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = open_uniform(self, sample_shape, self.loc)
        return self.loc + ((u - 0.5) * math.pi).tan() * self.scale

    def log_prob(self, value: Any) -> Tensor:
        z = (param(value, self.loc) - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z * z).log1p()

    def cdf(self, value: Any) -> Tensor:
        return ((param(value, self.loc) - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value: Any) -> Tensor:
        return ((param(value, self.loc) - 0.5) * math.pi).tan() * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class Gumbel(LocScale):
    """The Gumbel law of maxima: CDF exp(-exp(-(x - loc) / scale)).

    Examples:
        >>> lm.distributions.Gumbel(0.0, 1.0).mean
        tensor(0.5772)
    """

    arg_constraints: dict[str, Any] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER

    @property
    def stddev(self) -> Tensor:
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        u = open_uniform(self, sample_shape, self.loc)
        return self.loc - self.scale * (-u.log()).log()

    def log_prob(self, value: Any) -> Tensor:
        z = (param(value, self.loc) - self.loc) / self.scale
        return -(z + (-z).exp()) - self.scale.log()

    def cdf(self, value: Any) -> Tensor:
        return (-(-(param(value, self.loc) - self.loc) / self.scale).exp()).exp()

    def entropy(self) -> Tensor:
        return self.scale.log() + 1 + _EULER


class HalfNormal(Distribution):
    """|X| for X ~ N(0, scale^2): density 2 N(x; 0, scale) on x >= 0.

    Examples:
        >>> lm.distributions.HalfNormal(1.0).log_prob(lm.tensor(0.0))
        tensor(-0.2258)
    """

    arg_constraints: dict[str, Any] = {"scale": constraints.positive}
    support = constraints.nonnegative

    has_rsample = True
    _shown = ("scale",)

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        self.scale = param(scale)
        self._normal = Normal(self.scale * 0, self.scale, validate_args)
        super().__init__(tuple(self.scale.shape), (), validate_args)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self) -> Tensor:
        return self.scale * 0

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._normal.rsample(sample_shape).abs()

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.scale)
        return where(value >= 0, self._normal.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value: Any) -> Tensor:
        return 2 * self._normal.cdf(param(value, self.scale)) - 1

    def entropy(self) -> Tensor:
        return self._normal.entropy() - math.log(2)


class LogNormal(LocScale):
    """exp(X) for X ~ N(loc, scale^2).

    Examples:
        >>> lm.distributions.LogNormal(0.0, 1.0).log_prob(lm.tensor(1.0))
        tensor(-0.9189)
    """

    arg_constraints: dict[str, Any] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        super().__init__(loc, scale, validate_args)
        self._normal = Normal(self.loc, self.scale, validate_args)

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.pow(2)).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self._normal.rsample(sample_shape).exp()

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.loc)
        return self._normal.log_prob(value.log()) - value.log()

    def cdf(self, value: Any) -> Tensor:
        return self._normal.cdf(param(value, self.loc).log())

    def entropy(self) -> Tensor:
        return self._normal.entropy() + self.loc


