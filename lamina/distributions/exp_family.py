"""`ExponentialFamily`, PyTorch's base for laws of the form
p(x; theta) = h(x) exp(<t(x), theta> - F(theta)): a subclass gives its natural parameters
theta, the log-normaliser F and E[log h(x)], and gets its entropy as a Bregman divergence,
by autograd."""

from __future__ import annotations

from typing import Any

from lamina.autograd.engine import grad
from lamina.autograd.grad_mode import enable_grad
from lamina.autograd.tensor import Tensor
from lamina.distributions.distribution import Distribution


class ExponentialFamily(Distribution):
    """An exponential family: `_natural_params`, `_log_normalizer(*theta)` and
    `_mean_carrier_measure` define it; `entropy` follows.

    Examples:
        >>> class Exp(lm.distributions.ExponentialFamily):
        ...     def __init__(self, rate):
        ...         self.rate = rate; super().__init__(rate.shape)
        ...     _natural_params = property(lambda self: (-self.rate,))
        ...     _mean_carrier_measure = 0
        ...     def _log_normalizer(self, x): return -(-x).log()
        >>> round(Exp(lm.tensor([2.0])).entropy().item(), 4)
        0.3069
    """

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError(f"{type(self).__name__}: no _natural_params")

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}: no _log_normalizer")

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__}: no _mean_carrier_measure")

    def entropy(self) -> Tensor:
        """F(theta) - <theta, grad F(theta)> - E[log h(x)]."""
        with enable_grad():
            params = [p.detach().requires_grad_() for p in self._natural_params]
            log_norm = self._log_normalizer(*params)
            grads = grad(log_norm.sum(), params, create_graph=True)
        result = log_norm - self._mean_carrier_measure
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(*self.batch_shape, -1).sum(-1)
        return result
