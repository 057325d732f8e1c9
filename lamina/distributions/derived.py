"""Laws PyTorch builds by transforming simpler ones, here in closed form: HalfCauchy,
Pareto, Weibull, InverseGamma and Kumaraswamy. Each draws by its inverse CDF of a uniform
draw (InverseGamma: 1 / Gamma), so rsample is differentiable in every parameter."""

from __future__ import annotations

import math
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.creation import full
from lamina.distributions import constraints
from lamina.distributions.continuous import open_uniform
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.gamma_family import Gamma
from lamina.functions.math import where
from lamina.tensor_functions import broadcast_tensors

_EULER = 0.5772156649015329


class _TwoParameters(Distribution):
    """A law of two parameters broadcast together, drawn through `icdf`."""

    _names: tuple[str, str]
    has_rsample = True

    def __init__(self, first: Any, second: Any, validate_args: bool | None = None) -> None:
        a = param(first, second if isinstance(second, Tensor) else None)
        a, b = broadcast_tensors(a, param(second, a))
        setattr(self, self._names[0], a)
        setattr(self, self._names[1], b)
        super().__init__(tuple(a.shape), (), validate_args)
        self._check((a.detach().numpy() > 0) & (b.detach().numpy() > 0),
                    f"{' and '.join(self._names)} must be positive")

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        like = getattr(self, self._names[0])
        return self.icdf(open_uniform(self, sample_shape, like, floor="eps"))


def _infinite_where(cond: Tensor, value: Tensor) -> Tensor:
    return where(cond, value, math.inf)


class Pareto(_TwoParameters):
    """Density alpha scale^alpha / x^(alpha + 1) on [scale, inf).

    Examples:
        >>> lm.distributions.Pareto(1.0, 2.0).log_prob(lm.tensor(2.0))
        tensor(-1.3863)
    """

    arg_constraints: dict[str, Any] = {"alpha": constraints.positive, "scale": constraints.positive}

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        return constraints.greater_than_eq(self.scale)

    _names = _shown = ("scale", "alpha")

    @property
    def mean(self) -> Tensor:
        a = self.alpha
        return _infinite_where(a > 1, a * self.scale / (a - 1).clamp(min=1e-300))

    @property
    def mode(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        a = self.alpha
        return _infinite_where(a > 2, self.scale.pow(2) * a / (
            (a - 1).pow(2) * (a - 2)).clamp(min=1e-300))

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.scale)
        a = self.alpha
        return a.log() + a * self.scale.log() - (a + 1) * value.log()

    def cdf(self, value: Any) -> Tensor:
        return 1 - (self.scale / param(value, self.scale)).pow(self.alpha)

    def icdf(self, value: Any) -> Tensor:
        return self.scale * (1 - param(value, self.scale)).pow(-1 / self.alpha)

    def entropy(self) -> Tensor:
        return (self.scale / self.alpha).log() + 1 / self.alpha + 1


class Weibull(_TwoParameters):
    """Density (k / scale) (x / scale)^(k - 1) exp(-(x / scale)^k), k the concentration.

    Examples:
        >>> lm.distributions.Weibull(1.0, 2.0).cdf(lm.tensor(1.0))
        tensor(0.6321)
    """

    arg_constraints: dict[str, Any] = {
        "scale": constraints.positive,
        "concentration": constraints.positive}
    support = constraints.positive

    _names = _shown = ("scale", "concentration")

    @property
    def mean(self) -> Tensor:
        return self.scale * (1 + 1 / self.concentration).lgamma().exp()

    @property
    def mode(self) -> Tensor:
        k = self.concentration
        return self.scale * ((k - 1) / k).pow(1 / k)

    @property
    def variance(self) -> Tensor:
        k = self.concentration
        return self.scale.pow(2) * ((1 + 2 / k).lgamma().exp()
                                    - (2 * (1 + 1 / k).lgamma()).exp())

    def log_prob(self, value: Any) -> Tensor:
        z = param(value, self.scale) / self.scale
        k = self.concentration
        return (k / self.scale).log() + (k - 1) * z.log() - z.pow(k)

    def cdf(self, value: Any) -> Tensor:
        return 1 - (-(param(value, self.scale) / self.scale).pow(self.concentration)).exp()

    def icdf(self, value: Any) -> Tensor:
        return self.scale * (-(-param(value, self.scale)).log1p()).pow(1 / self.concentration)

    def entropy(self) -> Tensor:
        k = self.concentration
        return _EULER * (1 - 1 / k) + (self.scale / k).log() + 1


class Kumaraswamy(_TwoParameters):
    """Density a b x^(a - 1) (1 - x^a)^(b - 1) on (0, 1), a = concentration1 and
    b = concentration0.

    Examples:
        >>> lm.distributions.Kumaraswamy(2.0, 2.0).cdf(lm.tensor(0.5))
        tensor(0.4375)
    """

    arg_constraints: dict[str, Any] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive}
    support = constraints.unit_interval

    _names = _shown = ("concentration1", "concentration0")

    def _moment(self, n: int) -> Tensor:
        a, b = self.concentration1, self.concentration0
        return b * ((1 + n / a).lgamma() + b.lgamma() - (1 + n / a + b).lgamma()).exp()

    @property
    def mean(self) -> Tensor:
        return self._moment(1)

    @property
    def mode(self) -> Tensor:
        """((a - 1) / (ab - 1))^(1/a) where a, b >= 1, not both 1 (NaN elsewhere). PyTorch's
        formula gives NaN for most of that range too."""
        a, b = self.concentration1, self.concentration0
        inside = (a >= 1) & (b >= 1) & ((a > 1) | (b > 1))
        return where(inside, ((a - 1) / (a * b - 1)).clamp(min=0).pow(1 / a), math.nan)

    @property
    def variance(self) -> Tensor:
        return self._moment(2) - self._moment(1).pow(2)

    def log_prob(self, value: Any) -> Tensor:
        x = param(value, self.concentration1)
        a, b = self.concentration1, self.concentration0
        return a.log() + b.log() + (a - 1) * x.log() + (b - 1) * (-x.pow(a)).log1p()

    def cdf(self, value: Any) -> Tensor:
        x = param(value, self.concentration1)
        return 1 - (1 - x.pow(self.concentration1)).pow(self.concentration0)

    def icdf(self, value: Any) -> Tensor:
        p = param(value, self.concentration1)
        a, b = self.concentration1, self.concentration0
        return (1 - (1 - p).pow(1 / b)).pow(1 / a)

    def entropy(self) -> Tensor:
        a, b = self.concentration1, self.concentration0
        harmonic = (b + 1).digamma() + _EULER
        return (1 - 1 / b) + (1 - 1 / a) * harmonic - (a * b).log()


class HalfCauchy(Distribution):
    """|X| for X ~ Cauchy(0, scale).

    Examples:
        >>> lm.distributions.HalfCauchy(1.0).cdf(lm.tensor(1.0))
        tensor(0.5000)
    """

    arg_constraints: dict[str, Any] = {"scale": constraints.positive}
    support = constraints.nonnegative

    _shown = ("scale",)
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        self.scale = param(scale)
        super().__init__(tuple(self.scale.shape), (), validate_args)
        self._check(self.scale.detach().numpy() > 0, "scale must be positive")

    @property
    def mean(self) -> Tensor:
        return full(tuple(self.scale.shape), math.inf, dtype=self.scale.dtype)

    @property
    def mode(self) -> Tensor:
        return self.scale * 0

    @property
    def variance(self) -> Tensor:
        return self.mean

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.icdf(open_uniform(self, sample_shape, self.scale, floor="eps"))

    def log_prob(self, value: Any) -> Tensor:
        z = param(value, self.scale) / self.scale
        density = math.log(2 / math.pi) - self.scale.log() - (z * z).log1p()
        return where(z >= 0, density, -math.inf)

    def cdf(self, value: Any) -> Tensor:
        return (param(value, self.scale) / self.scale).atan() * (2 / math.pi)

    def icdf(self, value: Any) -> Tensor:
        return self.scale * (param(value, self.scale) * (math.pi / 2)).tan()

    def entropy(self) -> Tensor:  # Cauchy's log(4 pi scale), less the log 2 folded away
        return (self.scale * (2 * math.pi)).log()


class InverseGamma(_TwoParameters):
    """1 / X for X ~ Gamma(concentration, rate): density rate^a x^(-a-1) e^(-rate / x) /
    Gamma(a).

    Examples:
        >>> lm.distributions.InverseGamma(3.0, 2.0).mean
        tensor(1.)
    """

    arg_constraints: dict[str, Any] = {
        "concentration": constraints.positive,
        "rate": constraints.positive}
    support = constraints.positive

    _names = _shown = ("concentration", "rate")

    @property
    def mean(self) -> Tensor:
        a = self.concentration
        return _infinite_where(a > 1, self.rate / (a - 1).clamp(min=1e-300))

    @property
    def mode(self) -> Tensor:
        return self.rate / (self.concentration + 1)

    @property
    def variance(self) -> Tensor:
        a = self.concentration
        return _infinite_where(a > 2, self.rate.pow(2) / (
            (a - 1).pow(2) * (a - 2)).clamp(min=1e-300))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return 1 / Gamma(self.concentration, self.rate).rsample(sample_shape)

    def log_prob(self, value: Any) -> Tensor:
        x = param(value, self.rate)
        a, b = self.concentration, self.rate
        return a * b.log() - a.lgamma() - (a + 1) * x.log() - b / x

    def cdf(self, value: Any) -> Tensor:
        from lamina.special import gammaincc

        return gammaincc(self.concentration, self.rate / param(value, self.rate))

    def entropy(self) -> Tensor:
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()
