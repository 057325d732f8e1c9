"""Mixtures: `MixtureSameFamily` (K components of one family, weighted by a Categorical)
and `StudentT`, the normal whose precision is drawn from a gamma law, with PyTorch's
formulas."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.creation_random import randn
from lamina.distributions import constraints
from lamina.distributions.discrete import Categorical
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.gamma_family import Chi2
from lamina.tensor_functions import broadcast_tensors, where


class StudentT(Distribution):
    """Student's t law with `df` degrees of freedom, shifted by `loc` and scaled by
    `scale`. `rsample` carries gradients to `loc` and `scale` (not to `df`: its chi-square
    draw has no reparameterisation here).

    Examples:
        >>> d = lm.distributions.StudentT(lm.tensor([3.0]))
        >>> d.log_prob(lm.tensor([0.0]))
        tensor([-1.0009])
    """

    arg_constraints: dict[str, Any] = {
        "df": constraints.positive,
        "loc": constraints.real,
        "scale": constraints.positive}
    support = constraints.real

    has_rsample = True
    _shown = ("df", "loc", "scale")

    def __init__(self, df: Any, loc: Any = 0.0, scale: Any = 1.0,
                 validate_args: bool | None = None) -> None:
        df = param(df)
        self.df, self.loc, self.scale = broadcast_tensors(df, param(loc, df), param(scale, df))
        super().__init__(tuple(self.df.shape), (), validate_args)
        self._check((self.df.detach().numpy() > 0) & (self.scale.detach().numpy() > 0),
                    "df and scale must be positive")

    @property
    def mean(self) -> Tensor:
        return where(self.df > 1, self.loc, math.nan)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        finite = self.scale.pow(2) * df / where(df > 2, df - 2, 1.0)
        return where(df > 2, finite, where(df > 1, math.inf, math.nan))

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended(sample_shape)
        z = Chi2(self.df).rsample(sample_shape)  # differentiable in df too
        y = randn(*shape, dtype=self.loc.dtype) * (z / self.df).rsqrt()
        return self.loc + self.scale * y

    def log_prob(self, value: Any) -> Tensor:
        value = param(value, self.loc)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y.pow(2) / self.df).log1p() - z

    def entropy(self) -> Tensor:
        df = self.df
        lbeta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma()
                                                     - (0.5 * df).digamma())
                + 0.5 * df.log() + lbeta)


class MixtureSameFamily(Distribution):
    """A mixture: `mixture_distribution` (a Categorical over the last batch axis of the
    components) picks one of `component_distribution`'s K components.

    Examples:
        >>> D = lm.distributions
        >>> mix = D.MixtureSameFamily(D.Categorical(probs=lm.tensor([0.5, 0.5])),
        ...                           D.Normal(lm.tensor([-1.0, 1.0]), lm.tensor([1.0, 1.0])))
        >>> mix.mean, mix.variance
        (tensor(0.), tensor(2.))
    """

    arg_constraints: dict[str, Any] = {}

    @constraints.dependent_property
    def support(self) -> Any:
        return constraints.MixtureSameFamilyConstraint(self._component.support)

    def __init__(self, mixture_distribution: Categorical, component_distribution: Distribution,
                 validate_args: bool | None = None) -> None:
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("MixtureSameFamily: mixture_distribution must be a Categorical; "
                             f"got {type(mixture_distribution).__name__}")
        self._mixture, self._component = mixture_distribution, component_distribution
        cdbs = tuple(component_distribution.batch_shape)
        k = mixture_distribution.logits.shape[-1]
        if not cdbs or cdbs[-1] != k:
            raise ValueError(f"MixtureSameFamily: the components' last batch axis must be the "
                             f"mixture's {k} categories; got batch shape {cdbs}")
        mdbs = tuple(mixture_distribution.batch_shape)
        if any(a != b and a != 1 and b != 1 for a, b in zip(mdbs[::-1], cdbs[-2::-1])):
            raise ValueError(f"MixtureSameFamily: the mixture's batch shape {mdbs} does not "
                             f"broadcast with the components' {cdbs[:-1]}")
        self._event_ndims = len(component_distribution.event_shape)
        super().__init__(cdbs[:-1], tuple(component_distribution.event_shape), validate_args)

    @property
    def mixture_distribution(self) -> Categorical:
        return self._mixture

    @property
    def component_distribution(self) -> Distribution:
        return self._component

    def _pad(self, x: Tensor) -> Tensor:
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture(self, x: Tensor) -> Tensor:
        """The mixture's (..., K) weights shaped against the components' (..., K, *event)."""
        pad = (0 if len(self._mixture.batch_shape) == 1
               else len(self.batch_shape) - len(self._mixture.batch_shape))
        shape = tuple(x.shape)
        return x.reshape(shape[:-1] + (1,) * pad + shape[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self) -> Tensor:
        probs = self._pad_mixture(self._mixture.probs)
        return (probs * self._component.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self) -> Tensor:
        probs = self._pad_mixture(self._mixture.probs)
        axis = -1 - self._event_ndims
        within = (probs * self._component.variance).sum(axis)
        between = (probs * (self._component.mean - self._pad(self.mean)).pow(2)).sum(axis)
        return within + between

    def log_prob(self, value: Any) -> Tensor:
        x = self._pad(param(value, self._mixture.probs))
        log_mix = self._mixture.logits.log_softmax(-1)
        return (self._component.log_prob(x) + log_mix).logsumexp(-1)

    def cdf(self, value: Any) -> Tensor:
        x = self._pad(param(value, self._mixture.probs))
        return (self._component.cdf(x) * self._mixture.probs).sum(-1)

    def _draw(self, shape: Any) -> Tensor:
        sample_shape = tuple(shape)[:len(shape) - len(self.batch_shape) - self._event_ndims]
        which = self._mixture.sample(sample_shape).numpy()
        draws = self._component.sample(sample_shape).numpy()  # (S, B, K, *event)
        index = which.reshape(which.shape + (1,) * (self._event_ndims + 1))
        index = np.broadcast_to(index, draws.shape[:-1 - self._event_ndims] + (1,)
                                + draws.shape[draws.ndim - self._event_ndims:])
        picked = np.take_along_axis(draws, index, axis=-1 - self._event_ndims)
        return as_tensor(np.squeeze(picked, axis=-1 - self._event_ndims))

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self._mixture!r},\n  {self._component!r})")
