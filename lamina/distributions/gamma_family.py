"""The distributions scored through the gamma function: Gamma, Beta, Dirichlet (drawn by
NumPy; their rsample differentiable by implicit reparameterisation, as PyTorch's: see
implicit.py) and Poisson."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.distributions import constraints
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.implicit import standard_gamma
from lamina.random import numpy_rng
from lamina.tensor_functions import broadcast_tensors


class Gamma(Distribution):
    """The gamma law of `concentration` (shape) and `rate`: density
    rate^a x^(a-1) exp(-rate x) / Gamma(a).

    Examples:
        >>> lm.distributions.Gamma(2.0, 1.0).log_prob(lm.tensor(1.0))
        tensor(-1.)
    """

    arg_constraints: dict[str, Any] = {
        "concentration": constraints.positive,
        "rate": constraints.positive}
    support = constraints.nonnegative

    _shown = ("concentration", "rate")
    has_rsample = True

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        a = param(concentration, rate if isinstance(rate, Tensor) else None)
        self.concentration, self.rate = broadcast_tensors(a, param(rate, a))
        super().__init__(tuple(self.rate.shape), (), validate_args)
        self._check((self.concentration.detach().numpy() > 0)
                    & (self.rate.detach().numpy() > 0), "concentration and rate must be "
                    "positive")

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def _draw(self, shape: Any) -> Tensor:
        a = np.broadcast_to(self.concentration.detach().numpy(), shape)
        b = np.broadcast_to(self.rate.detach().numpy(), shape)
        return as_tensor(numpy_rng().gamma(a, 1 / b).astype(a.dtype))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Draws differentiable in concentration (implicit reparameterisation) and rate."""
        shape = self._extended(sample_shape)
        x = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        tiny = np.finfo(x.dtype).tiny  # PyTorch's floor, outside the graph: never exactly 0
        return x + (x.clamp(min=tiny) - x).detach()

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.rate)
        a, b = self.concentration, self.rate
        return a.xlogy(b) + (a - 1).xlogy(value) - b * value - a.lgamma()

    def cdf(self, value: Any) -> Tensor:
        from lamina.special import gammainc

        value = param(value, self.rate)
        return gammainc(self.concentration, self.rate * value)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1 - a) * a.digamma()


class Chi2(Gamma):
    """The chi-square law with `df` degrees of freedom: Gamma(df / 2, 1 / 2).

    Examples:
        >>> d = lm.distributions.Chi2(lm.tensor([4.0]))
        >>> d.mean, d.df
        (tensor([4.]), tensor([4.]))
    """

    arg_constraints: dict[str, Any] = {"df": constraints.positive}

    _shown = ()

    def __init__(self, df: Any, validate_args: bool | None = None) -> None:
        super().__init__(0.5 * param(df), 0.5, validate_args)

    @property
    def df(self) -> Tensor:
        return self.concentration * 2


class Dirichlet(Distribution):
    """The Dirichlet law over the simplex of the last axis of `concentration`.

    Examples:
        >>> lm.distributions.Dirichlet(lm.ones(3)).log_prob(lm.tensor([0.2, 0.3, 0.5]))
        tensor(0.6931)
    """

    arg_constraints: dict[str, Any] = {
        "concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex

    _shown = ("concentration",)
    has_rsample = True

    def __init__(self, concentration: Any, validate_args: bool | None = None) -> None:
        self.concentration = param(concentration)
        if self.concentration.ndim < 1:
            raise ValueError("Dirichlet: concentration must have at least one dimension")
        shape = tuple(self.concentration.shape)
        super().__init__(shape[:-1], shape[-1:], validate_args)
        self._check(self.concentration.detach().numpy() > 0, "concentration must be positive")

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self) -> Tensor:
        c = (self.concentration - 1).clamp(min=0)
        return c / c.sum(-1, keepdim=True)

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, keepdim=True)
        mean = self.concentration / total
        return mean * (1 - mean) / (total + 1)

    def _draw(self, shape: Any) -> Tensor:
        a = np.broadcast_to(self.concentration.detach().numpy(), shape)
        g = numpy_rng().gamma(a)
        return as_tensor((g / g.sum(-1, keepdims=True)).astype(a.dtype))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Normalised gamma draws, differentiable in concentration through the gammas'
        implicit reparameterisation (PyTorch differentiates the Dirichlet's marginals
        instead: another unbiased gradient of the same expectation)."""
        g = standard_gamma(self.concentration.expand(self._extended(sample_shape)))
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.concentration)
        c = self.concentration
        return ((c - 1).xlogy(value).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1))

    def entropy(self) -> Tensor:
        c = self.concentration
        k, total = c.shape[-1], c.sum(-1)
        return (c.lgamma().sum(-1) - total.lgamma() - (k - total) * total.digamma()
                - ((c - 1) * c.digamma()).sum(-1))


class Beta(Distribution):
    """The beta law on [0, 1]: density x^(c1-1) (1-x)^(c0-1) / B(c1, c0).

    Examples:
        >>> lm.distributions.Beta(2.0, 2.0).mean
        tensor(0.5000)
    """

    arg_constraints: dict[str, Any] = {
        "concentration1": constraints.positive,
        "concentration0": constraints.positive}
    support = constraints.unit_interval

    _shown = ("concentration1", "concentration0")
    has_rsample = True

    def __init__(self, concentration1: Any, concentration0: Any,
                 validate_args: bool | None = None) -> None:
        c1 = param(concentration1, concentration0 if isinstance(concentration0, Tensor)
                   else None)
        self.concentration1, self.concentration0 = broadcast_tensors(c1, param(concentration0,
                                                                               c1))
        super().__init__(tuple(self.concentration1.shape), (), validate_args)
        self._check((self.concentration1.detach().numpy() > 0)
                    & (self.concentration0.detach().numpy() > 0), "concentrations must be "
                    "positive")

    @property
    def mean(self) -> Tensor:
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self) -> Tensor:
        return (self.concentration1 - 1) / (self.concentration1 + self.concentration0 - 2)

    @property
    def variance(self) -> Tensor:
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def _draw(self, shape: Any) -> Tensor:
        a = np.broadcast_to(self.concentration1.detach().numpy(), shape)
        b = np.broadcast_to(self.concentration0.detach().numpy(), shape)
        return as_tensor(numpy_rng().beta(a, b).astype(a.dtype))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """g1 / (g1 + g0) of two gamma draws, differentiable in both concentrations (see
        Dirichlet.rsample)."""
        shape = self._extended(sample_shape)
        g1 = standard_gamma(self.concentration1.expand(shape))
        g0 = standard_gamma(self.concentration0.expand(shape))
        return g1 / (g1 + g0)

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.concentration1)
        c1, c0 = self.concentration1, self.concentration0
        return ((c1 - 1).xlogy(value) + (c0 - 1).xlogy(1 - value) + (c1 + c0).lgamma()
                - c1.lgamma() - c0.lgamma())

    def entropy(self) -> Tensor:
        c1, c0 = self.concentration1, self.concentration0
        total = c1 + c0
        return (c1.lgamma() + c0.lgamma() - total.lgamma() - (c1 - 1) * c1.digamma()
                - (c0 - 1) * c0.digamma() + (total - 2) * total.digamma())


class Poisson(Distribution):
    """The Poisson law of `rate`: P(k) = rate^k exp(-rate) / k!.

    Examples:
        >>> lm.distributions.Poisson(2.0).log_prob(lm.tensor(0.0))
        tensor(-2.)
    """

    arg_constraints: dict[str, Any] = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    _shown = ("rate",)

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        self.rate = param(rate)
        super().__init__(tuple(self.rate.shape), (), validate_args)
        self._check(self.rate.detach().numpy() >= 0, "rate must be non-negative")

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def _draw(self, shape: Any) -> Tensor:
        r = np.broadcast_to(self.rate.detach().numpy(), shape)
        return as_tensor(numpy_rng().poisson(r).astype(r.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.rate)
        v = value.detach().numpy()
        self._check((v >= 0) & (v == np.round(v)), "value must be a non-negative integer")
        return value.xlogy(self.rate) - self.rate - (value + 1).lgamma()
