"""Activation layers: stateless wrappers of lamina.functions, so they fit in a Sequential."""

from __future__ import annotations

from typing import Any, Literal

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer


@register_layer("ReLU")
class ReLU(Layer):
    """max(x, 0)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


@register_layer("LeakyReLU")
class LeakyReLU(Layer):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 0.01) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope)

    def get_config(self) -> dict[str, Any]:
        return {"negative_slope": self.negative_slope}


@register_layer("GELU")
class GELU(Layer):
    """x * Phi(x); approximate='tanh' uses the tanh approximation."""

    def __init__(self, approximate: Literal["none", "tanh"] = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def get_config(self) -> dict[str, Any]:
        return {"approximate": self.approximate}


@register_layer("ELU")
class ELU(Layer):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""

    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha)

    def get_config(self) -> dict[str, Any]:
        return {"alpha": self.alpha}


@register_layer("SiLU")
class SiLU(Layer):
    """x * sigmoid(x) (swish)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)


@register_layer("Softplus")
class Softplus(Layer):
    """log(1 + exp(beta * x)) / beta, a smooth ReLU; computed stably for any x."""

    def __init__(self, beta: float = 1.0) -> None:
        super().__init__()
        if not beta > 0:
            raise ValueError(f"Softplus: beta must be > 0; got {beta}")
        self.beta = beta

    def forward(self, x: Tensor) -> Tensor:
        if self.beta == 1:
            return F.softplus(x)
        return F.softplus(x * self.beta) / self.beta

    def get_config(self) -> dict[str, Any]:
        return {"beta": self.beta}


@register_layer("Sigmoid")
class Sigmoid(Layer):
    """1 / (1 + exp(-x))."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


@register_layer("Tanh")
class Tanh(Layer):
    """tanh(x)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


@register_layer("Softmax")
class Softmax(Layer):
    """softmax along `axis`."""

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = axis

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.axis)

    def get_config(self) -> dict[str, Any]:
        return {"axis": self.axis}
