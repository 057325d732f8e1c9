"""`nn.utils.parametrizations`: weight normalisation as a parametrisation (PyTorch's
current form: `parametrizations.weight.original0` is the magnitude, `original1` the
direction).

    >>> type(nn.utils.parametrizations.weight_norm(nn.Linear(2, 2))).__name__
    'ParametrizedLinear'
"""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.utils.parametrize import register_parametrization
from lamina.nn.utils.weight_norms import _norm_except_dim


class _WeightNorm(Layer):
    def __init__(self, dim: int | None) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:  # type: ignore[override]
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Layer, name: str = "weight", dim: int | None = 0) -> Any:
    """`module.<name>` as magnitude times direction, `original0 * original1 / |original1|`
    (the norm over every dim but `dim`; over all of it where dim is None), as PyTorch's.

    Examples:
        >>> layer = nn.utils.parametrizations.weight_norm(nn.Linear(3, 2))
        >>> list(layer.state_dict())
        ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    return register_parametrization(module, name, _WeightNorm(dim))
