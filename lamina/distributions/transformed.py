"""`TransformedDistribution`: a base distribution pushed through transforms, its
log-probability corrected by their log-Jacobians, as PyTorch's."""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.distributions import constraints
from lamina.distributions.distribution import Distribution, param
from lamina.distributions.transforms import (
    Transform,
    _sum_rightmost,
)


class TransformedDistribution(Distribution):
    """Draws of `base_distribution` sent through `transforms` in order.

    Examples:
        >>> D, T = lm.distributions, lm.distributions.transforms
        >>> squashed = D.TransformedDistribution(D.Normal(0.0, 1.0), [T.TanhTransform()])
        >>> squashed.log_prob(lm.tensor(0.0))
        tensor(-0.9189)
    """

    arg_constraints: dict[str, Any] = {}

    def __init__(self, base_distribution: Distribution, transforms: Any,
                 validate_args: bool | None = None) -> None:
        if isinstance(transforms, Transform):
            transforms = [transforms]
        if not all(isinstance(t, Transform) for t in transforms):
            raise ValueError("TransformedDistribution: transforms must be a Transform or a "
                             f"list of them; got {transforms!r}")
        self.base_dist, self.transforms = base_distribution, list(transforms)
        shape = tuple(base_distribution.batch_shape) + tuple(base_distribution.event_shape)
        event_dim = len(base_distribution.event_shape)
        for t in self.transforms:
            event_dim = max(event_dim, t.codomain.event_dim)
            shape = t.forward_shape(shape)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args)
        self.has_rsample = base_distribution.has_rsample

    @constraints.dependent_property(is_discrete=False)
    def support(self) -> Any:
        """The last transform's codomain, over the event's dims."""
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        extra = len(self.event_shape) - support.event_dim
        return constraints.independent(support, extra) if extra > 0 else support

    def sample(self, sample_shape: Any = ()) -> Tensor:
        x = self.base_dist.sample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value: Any) -> Tensor:
        y = param(value)
        event_dim = len(self.event_shape)
        log_prob: Any = 0.0
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(t.log_abs_det_jacobian(x, y),
                                                 event_dim - t.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y),
                                         event_dim - len(self.base_dist.event_shape))

    def _monotonized(self, cdf: Tensor) -> Tensor:
        """The cdf of a decreasing map counts from the other end."""
        sign: Any = 1
        for t in self.transforms:
            sign = sign * t.sign
        return cdf if isinstance(sign, int) and sign == 1 else sign * (cdf - 0.5) + 0.5

    def cdf(self, value: Any) -> Tensor:
        value = param(value)
        for t in reversed(self.transforms):
            value = t.inv(value)
        return self._monotonized(self.base_dist.cdf(value))

    def icdf(self, value: Any) -> Tensor:
        value = self.base_dist.icdf(self._monotonized(param(value)))
        for t in self.transforms:
            value = t(value)
        return value

    def __repr__(self) -> str:
        return "TransformedDistribution()"
