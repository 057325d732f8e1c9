"""Heavy-tailed laws: FisherSnedecor (the F law, a ratio of scaled chi-squares) and
GeneralizedPareto (the peaks-over-threshold law of extreme-value statistics)."""

from __future__ import annotations

import math
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.creation_random import rand
from lamina.distributions import constraints
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.gamma_family import Gamma
from lamina.functions.math import where
from lamina.tensor_functions import broadcast_tensors
from lamina.type_info import finfo


class FisherSnedecor(Distribution):
    """The F law of (X1 / df1) / (X2 / df2) for chi-squares X1, X2 of df1, df2 degrees.

    Examples:
        >>> d = lm.distributions.FisherSnedecor(lm.tensor([4.0]), lm.tensor([6.0]))
        >>> d.mean, d.log_prob(lm.tensor([1.0]))
        (tensor([1.5000]), tensor([-0.8802]))
    """

    arg_constraints: dict[str, Any] = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True
    _shown = ("df1", "df2")

    def __init__(self, df1: Any, df2: Any, validate_args: bool | None = None) -> None:
        df1 = param(df1, df2 if isinstance(df2, Tensor) else None)
        self.df1, self.df2 = broadcast_tensors(df1, param(df2, df1))
        super().__init__(tuple(self.df1.shape), (), validate_args)
        self._check((self.df1.detach().numpy() > 0) & (self.df2.detach().numpy() > 0),
                    "df1 and df2 must be positive")
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1, validate_args=False)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2, validate_args=False)

    @property
    def mean(self) -> Tensor:
        return where(self.df2 > 2, self.df2 / (self.df2 - 2), math.nan)

    @property
    def mode(self) -> Tensor:
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 > 2, mode, math.nan)

    @property
    def variance(self) -> Tensor:
        d1, d2 = self.df1, self.df2
        spread = 2 * d2 ** 2 * (d1 + d2 - 2) / (d1 * (d2 - 2) ** 2 * (d2 - 4))
        return where(d2 > 4, spread, math.nan)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        tiny = finfo(self.df1.dtype).tiny
        x1, x2 = self._gamma1.rsample(sample_shape), self._gamma2.rsample(sample_shape)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.df1)
        self._check(value.detach().numpy() > 0, "value must be positive")
        half1, half2, ratio = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        norm = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        return (norm + half1 * ratio.log() + (half1 - 1) * value.log()
                - (half1 + half2) * (ratio * value).log1p())


class GeneralizedPareto(Distribution):
    """Survival (1 + c (x - loc) / scale)^(-1 / c) for concentration c (exp(-(x - loc) /
    scale) at c = 0): on [loc, inf) for c >= 0, [loc, loc - scale / c] for c < 0.

    Examples:
        >>> d = lm.distributions.GeneralizedPareto(0.0, 1.0, 0.5)
        >>> d.mean, d.log_prob(lm.tensor(1.0))
        (tensor(2.), tensor(-1.2164))
    """

    arg_constraints: dict[str, Any] = {"loc": constraints.real, "scale": constraints.positive,
                                       "concentration": constraints.real}
    has_rsample = True
    _shown = ("loc", "scale", "concentration")

    def __init__(self, loc: Any, scale: Any, concentration: Any,
                 validate_args: bool | None = None) -> None:
        like = next((v for v in (loc, scale, concentration) if isinstance(v, Tensor)), None)
        self.loc, self.scale, self.concentration = broadcast_tensors(
            *(param(v, like) for v in (loc, scale, concentration)))
        super().__init__(tuple(self.loc.shape), (), validate_args)
        self._check(self.scale.detach().numpy() > 0, "scale must be positive")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(self.loc, upper)

    def _safe(self) -> tuple[Tensor, Tensor]:
        """(c == 0, c with 1 in place of 0), for the two branches of each formula."""
        zero = self.concentration.detach().abs() <= 1e-8  # PyTorch's isclose(c, 0)
        return zero, where(zero, 1.0, self.concentration)

    @property
    def mean(self) -> Tensor:
        c = self.concentration
        return where(c < 1, self.loc + self.scale / (1 - where(c < 1, c, 0.5)), math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        c = where(self.concentration < 0.5, self.concentration, 0.25)
        spread = self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c))
        return where(self.concentration < 0.5, spread, math.nan)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        return self.icdf(rand(*self._extended(sample_shape), dtype=self.loc.dtype))

    def log_prob(self, value: Any) -> Tensor:
        z = (param(value, self.loc) - self.loc) / self.scale
        zero, c = self._safe()
        y = 1 / c + 1
        return -self.scale.log() - where(zero, z, where(y == 0, y, y * (c * z).log1p()))

    def log_survival_function(self, value: Any) -> Tensor:
        z = (param(value, self.loc) - self.loc) / self.scale
        zero, c = self._safe()
        return where(zero, -z, -(c * z).log1p() / c)

    def log_cdf(self, value: Any) -> Tensor:
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value: Any) -> Tensor:
        return self.log_cdf(value).exp()

    def icdf(self, value: Any) -> Tensor:
        zero, c = self._safe()
        log_u = (-param(value, self.loc)).log1p()
        return where(zero, self.loc - self.scale * log_u,
                     self.loc + self.scale / c * (-c * log_u).expm1())

    def entropy(self) -> Tensor:
        return (self.scale.log() + self.concentration + 1).broadcast_to(tuple(self.batch_shape))
