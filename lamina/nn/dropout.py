"""Dropout layers: of elements, of whole channels (Dropout1d/2d/3d), and for SELU networks
(AlphaDropout, FeatureAlphaDropout); identities in evaluation."""

from __future__ import annotations

from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer


class _DropoutNd(Layer):
    op: Any = staticmethod(F.dropout)

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"{type(self).__name__}: p must be in [0, 1]; got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return type(self).op(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

    def get_config(self) -> dict[str, Any]:
        return {"p": self.p}


@register_layer("Dropout")
class Dropout(_DropoutNd):
    """Zero elements with probability p while training (scaling the rest by 1/(1-p)).

    In eval mode it returns its input unchanged.

    Examples:
        >>> nn.Dropout(0.2).eval()(lm.ones(3)).tolist()
        [1.0, 1.0, 1.0]
    """


@register_layer("Dropout1d")
class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) (or (C, L)) with probability p while training.

    Examples:
        >>> nn.Dropout1d(0.5)(lm.ones(2, 4, 3)).shape
        lamina.Size([2, 4, 3])
    """

    op = staticmethod(F.dropout1d)


@register_layer("Dropout2d")
class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) (or (C, H, W)) with probability p while
    training (Tompson et al., 2015).

    Examples:
        >>> nn.Dropout2d(0.5)(lm.ones(2, 4, 3, 3)).shape
        lamina.Size([2, 4, 3, 3])
    """

    op = staticmethod(F.dropout2d)


@register_layer("Dropout3d")
class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) (or (C, D, H, W)) with probability p.

    Examples:
        >>> nn.Dropout3d(0.5)(lm.ones(1, 2, 2, 2, 2)).shape
        lamina.Size([1, 2, 2, 2, 2])
    """

    op = staticmethod(F.dropout3d)


@register_layer("AlphaDropout")
class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's self-normalisation: dropped values go to SELU's
    saturation value, then an affine map restores the mean and variance.

    Examples:
        >>> nn.AlphaDropout(0.2)(lm.zeros(4)).shape
        lamina.Size([4])
    """

    op = staticmethod(F.alpha_dropout)


@register_layer("FeatureAlphaDropout")
class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels of (N, C, *).

    Examples:
        >>> nn.FeatureAlphaDropout(0.2)(lm.zeros(2, 3, 4)).shape
        lamina.Size([2, 3, 4])
    """

    op = staticmethod(F.feature_alpha_dropout)
