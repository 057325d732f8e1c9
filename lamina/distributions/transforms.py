"""`distributions.transforms`, PyTorch's invertible maps with their log-Jacobians: what
`TransformedDistribution` pushes a distribution through (a SAC policy's tanh-squashed
Gaussian), and what `biject_to` uses to map the reals onto a constraint.

    >>> from lamina.distributions import transforms
    >>> t = transforms.TanhTransform()
    >>> t(lm.tensor([0.0])), t.log_abs_det_jacobian(lm.tensor([0.0]), lm.tensor([0.0]))
    (tensor([0.]), tensor([0.]))
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.distributions import constraints
from lamina.distributions.distribution import param
from lamina.functions import softplus

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "identity_transform"]


class Transform:
    """An invertible map y = t(x): `t(x)`, `t.inv(y)`, `t.log_abs_det_jacobian(x, y)`.
    With `cache_size=1` the last pair is kept, so `inv` of the last output gives the input
    back exactly (tanh's inverse at +-1 would be infinite).

    Examples:
        >>> t = lm.distributions.transforms.ExpTransform()
        >>> t.inv(t(lm.tensor([0.5])))
        tensor([0.5000])
    """

    bijective = True
    sign = 1
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size: int = 0) -> None:
        if cache_size not in (0, 1):
            raise ValueError(f"{type(self).__name__}: cache_size must be 0 or 1; got "
                             f"{cache_size}")
        self._cache_size = cache_size
        self._cached: tuple[Any, Any] | None = None

    @property
    def event_dim(self) -> int:
        return max(self.domain.event_dim, self.codomain.event_dim)

    @property
    def inv(self) -> Transform:
        return _InverseTransform(self)

    def __call__(self, x: Tensor) -> Tensor:
        if self._cache_size and self._cached is not None and self._cached[0] is x:
            return self._cached[1]
        y = self._call(x)
        if self._cache_size:
            self._cached = (x, y)
        return y

    def _inv_call(self, y: Tensor) -> Tensor:
        if self._cache_size and self._cached is not None and self._cached[1] is y:
            return self._cached[0]
        x = self._inverse(y)
        if self._cache_size:
            self._cached = (x, y)
        return x

    def _call(self, x: Tensor) -> Tensor:
        raise NotImplementedError

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no inverse")

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no log_abs_det_jacobian")

    def forward_shape(self, shape: Any) -> Any:
        return shape

    def inverse_shape(self, shape: Any) -> Any:
        return shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _InverseTransform(Transform):
    def __init__(self, transform: Transform) -> None:
        super().__init__()
        self._inv = transform
        self.domain, self.codomain = transform.codomain, transform.domain
        self.sign = transform.sign

    @property
    def inv(self) -> Transform:
        return self._inv

    def __call__(self, x: Tensor) -> Tensor:
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -self._inv.log_abs_det_jacobian(y, x)

    def __repr__(self) -> str:
        return f"_InverseTransform({self._inv!r})"


class ComposeTransform(Transform):
    """`parts` applied in order; the log-Jacobians add up.

    Examples:
        >>> T = lm.distributions.transforms
        >>> t = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)])
        >>> t(lm.tensor([0.0]))
        tensor([3.])
    """

    def __init__(self, parts: list[Transform], cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.parts = list(parts)
        if self.parts:
            self.domain, self.codomain = self.parts[0].domain, self.parts[-1].codomain
        self.sign = math.prod(p.sign for p in self.parts) if self.parts else 1

    def _call(self, x: Tensor) -> Tensor:
        for part in self.parts:
            x = part(x)
        return x

    def _inverse(self, y: Tensor) -> Tensor:
        for part in reversed(self.parts):
            y = part.inv(y)
        return y

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        if not self.parts:
            return x * 0
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total: Any = 0
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            total = total + _sum_rightmost(part.log_abs_det_jacobian(a, b),
                                           event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def __repr__(self) -> str:
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"ComposeTransform(\n    {inner}\n)"


identity_transform = ComposeTransform([])


def _sum_rightmost(t: Tensor, dims: int) -> Tensor:
    return t.reshape(*t.shape[:t.ndim - dims], -1).sum(-1) if dims > 0 else t


class ExpTransform(Transform):
    """y = exp(x), onto the positive numbers.

    Examples:
        >>> lm.distributions.ExpTransform()(lm.tensor([0.0]))
        tensor([1.])
    """

    codomain = constraints.positive

    def _call(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return x


class SigmoidTransform(Transform):
    """y = sigmoid(x), onto (0, 1).

    Examples:
        >>> lm.distributions.SigmoidTransform().inv(lm.tensor([0.5]))
        tensor([0.])
    """

    codomain = constraints.unit_interval

    def _call(self, x: Tensor) -> Tensor:
        return x.sigmoid()

    def _inverse(self, y: Tensor) -> Tensor:
        tiny, eps = float(np.finfo(y.dtype).tiny), float(np.finfo(y.dtype).eps)
        y = y.clamp(tiny, 1.0 - eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """y = tanh(x), onto (-1, 1): a squashed Gaussian policy's last step.

    Examples:
        >>> lm.distributions.TanhTransform(cache_size=1)(lm.tensor([0.0]))
        tensor([0.])
    """

    codomain = constraints.interval(-1.0, 1.0)

    def _call(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.atanh()

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        # log(1 - tanh(x)^2), written to stay finite for large |x|
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AffineTransform(Transform):
    """y = loc + scale * x; with `event_dim` > 0 the log-Jacobian sums over that many
    rightmost dims.

    Examples:
        >>> lm.distributions.AffineTransform(1.0, 2.0)(lm.tensor([3.0]))
        tensor([7.])
    """

    def __init__(self, loc: Any, scale: Any, event_dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim
        if event_dim:
            self.domain = self.codomain = constraints.independent(constraints.real, event_dim)

    @property
    def event_dim(self) -> int:
        return self._event_dim

    @property
    def sign(self) -> Any:  # type: ignore[override]
        s = self.scale
        return s.sign() if isinstance(s, Tensor) else (1 if s > 0 else -1 if s < 0 else 0)

    def _call(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        scale = param(self.scale, x)
        result = scale.abs().log().expand(*x.shape)
        return _sum_rightmost(result, self._event_dim)


# The rest of PyTorch's transforms, in their own modules (re-exported here).
from lamina.distributions.transforms_extra import (  # noqa: E402
    AbsTransform,
    PowerTransform,
    SoftplusTransform,
)
from lamina.distributions.transforms_pieces import (  # noqa: E402
    CatTransform,
    CumulativeDistributionTransform,
    StackTransform,
)
from lamina.distributions.transforms_structured import (  # noqa: E402
    CorrCholeskyTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    ReshapeTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)
