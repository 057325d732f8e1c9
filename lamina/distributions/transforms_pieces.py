"""PyTorch's transforms that apply other transforms piece by piece (re-exported by
transforms.py): `CatTransform` over consecutive slices of a dim, `StackTransform` over
its indices; and `CumulativeDistributionTransform`, a distribution's cdf."""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.distributions import constraints
from lamina.distributions.transforms import Transform, _sum_rightmost
from lamina.functions.shape import cat, stack


def _check_dim(t: Tensor, dim: int, size: int, who: str) -> None:
    if not -t.ndim <= dim < t.ndim:
        raise ValueError(f"{who}: dim {dim} out of range for a tensor with {t.ndim} dims")
    if t.shape[dim] != size:
        raise ValueError(f"{who}: size({dim}) = {t.shape[dim]} must equal {size}")


class CatTransform(Transform):
    """Transform i on the i-th slice of `dim` (`lengths[i]` long, 1 by default), the
    results concatenated, as torch.cat would.

    Examples:
        >>> D = lm.distributions
        >>> t = D.CatTransform([D.ExpTransform(), D.transforms.identity_transform], 0, [1, 2])
        >>> t(lm.zeros(3))
        tensor([1., 0., 0.])
    """

    def __init__(self, tseq: Any, dim: int = 0, lengths: Any = None,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.transforms, self.dim = list(tseq), dim
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise ValueError(f"CatTransform: lengths ({len(self.lengths)}) must match "
                             f"transforms ({len(self.transforms)})")
        self.length = sum(self.lengths)
        self.domain = constraints.cat([t.domain for t in self.transforms], dim, self.lengths)
        self.codomain = constraints.cat([t.codomain for t in self.transforms], dim,
                                        self.lengths)
        self.bijective = all(t.bijective for t in self.transforms)

    @property
    def event_dim(self) -> int:
        return max(t.event_dim for t in self.transforms)

    def _pieces(self, t: Tensor) -> list[Tensor]:
        _check_dim(t, self.dim, self.length, "CatTransform")
        out, start = [], 0
        for n in self.lengths:
            out.append(t.narrow(self.dim, start, n))
            start += n
        return out

    def _call(self, x: Tensor) -> Tensor:
        return cat([t(p) for t, p in zip(self.transforms, self._pieces(x))], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return cat([t.inv(p) for t, p in zip(self.transforms, self._pieces(y))], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        parts = []
        for t, xp, yp in zip(self.transforms, self._pieces(x), self._pieces(y)):
            part = t.log_abs_det_jacobian(xp, yp)
            parts.append(_sum_rightmost(part, self.event_dim - t.event_dim))
        dim = (self.dim - x.ndim if self.dim >= 0 else self.dim) + self.event_dim
        return cat(parts, dim) if dim < 0 else sum(parts)


class StackTransform(Transform):
    """Transform i on index i of `dim`, the results stacked, as torch.stack would.

    Examples:
        >>> D = lm.distributions
        >>> D.StackTransform([D.ExpTransform(), D.SigmoidTransform()], 1)(lm.zeros(2, 2))
        tensor([[1.0000, 0.5000],
                [1.0000, 0.5000]])
    """

    def __init__(self, tseq: Any, dim: int = 0, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.transforms, self.dim = list(tseq), dim
        self.domain = constraints.stack([t.domain for t in self.transforms], dim)
        self.codomain = constraints.stack([t.codomain for t in self.transforms], dim)
        self.bijective = all(t.bijective for t in self.transforms)

    def _slices(self, t: Tensor) -> list[Tensor]:
        _check_dim(t, self.dim, len(self.transforms), "StackTransform")
        return [t.select(self.dim, i) for i in range(t.shape[self.dim])]

    def _call(self, x: Tensor) -> Tensor:
        return stack([t(p) for t, p in zip(self.transforms, self._slices(x))], self.dim)

    def _inverse(self, y: Tensor) -> Tensor:
        return stack([t.inv(p) for t, p in zip(self.transforms, self._slices(y))], self.dim)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return stack([t.log_abs_det_jacobian(xp, yp) for t, xp, yp in
                      zip(self.transforms, self._slices(x), self._slices(y))], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x), onto [0, 1]; its log-Jacobian the log-density.

    Examples:
        >>> D = lm.distributions
        >>> D.CumulativeDistributionTransform(D.Normal(0.0, 1.0))(lm.tensor([0.0]))
        tensor([0.5000])
    """

    codomain = constraints.unit_interval

    def __init__(self, distribution: Any, cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.distribution = distribution
        self.domain = distribution.support

    def _call(self, x: Tensor) -> Tensor:
        return self.distribution.cdf(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return self.distribution.log_prob(x)
