"""The rest of PyTorch's elementwise transforms (re-exported by transforms.py):
softplus, powers, and the absolute value (not invertible: HalfCauchy-style laws)."""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.distributions import constraints
from lamina.distributions.distribution import param
from lamina.distributions.transforms import Transform
from lamina.functions import softplus


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)), onto the positive numbers.

    Examples:
        >>> lm.distributions.SoftplusTransform()(lm.tensor([0.0]))
        tensor([0.6931])
    """

    codomain = constraints.positive

    def _call(self, x: Tensor) -> Tensor:
        return softplus(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x)



class PowerTransform(Transform):
    """y = x ** exponent, on the positive numbers.

    Examples:
        >>> lm.distributions.PowerTransform(2.0)(lm.tensor([3.0]))
        tensor([9.])
    """

    domain = constraints.positive
    codomain = constraints.positive

    def __init__(self, exponent: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.exponent = param(exponent)  # a tensor of the default dtype, as PyTorch's

    def _call(self, x: Tensor) -> Tensor:
        return x.pow(self.exponent)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return (self.exponent * y / x).abs().log()


class AbsTransform(Transform):
    """y = |x|: not a bijection (its inverse gives the positive root), as PyTorch's.

    Examples:
        >>> lm.distributions.AbsTransform()(lm.tensor([-2.0]))
        tensor([2.])
    """

    bijective = False
    codomain = constraints.positive

    def _call(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tensor:
        return y
