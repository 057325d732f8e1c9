"""RMSNorm (PyTorch's `nn.RMSNorm`, the normalisation of Llama-style transformers): each
sample scaled by the root mean square of its trailing axes, no mean subtracted, no bias."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


@register_layer("RMSNorm")
class RMSNorm(Layer):
    """x / sqrt(mean(x**2) + eps) over the trailing `normalized_shape` axes, times a
    learned `weight` (ones) where `elementwise_affine`.

    Args:
        normalized_shape: the trailing shape to normalise over (an int for the last axis).
        eps: added to the mean square; the input dtype's machine epsilon where None.
        elementwise_affine: learn `weight`.

    Examples:
        >>> nn.RMSNorm(2)(lm.tensor([[3.0, 4.0]])).pow(2).mean().item()
        0.99999...
    """

    def __init__(self, normalized_shape: int | list[int], eps: float | None = None,
                 elementwise_affine: bool = True) -> None:
        super().__init__()
        shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                 else tuple(normalized_shape))
        if not shape or any(not isinstance(n, int) or n < 1 for n in shape):
            raise ValueError(f"RMSNorm: normalized_shape must be sizes >= 1; got "
                             f"{normalized_shape!r}")
        self.normalized_shape, self.eps = shape, eps
        self.elementwise_affine = elementwise_affine
        self.weight = Parameter(np.ones(shape, np.float32)) if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")

    def get_config(self) -> dict[str, Any]:
        shape = self.normalized_shape
        return {"normalized_shape": shape[0] if len(shape) == 1 else list(shape),
                "eps": self.eps, "elementwise_affine": self.elementwise_affine}
