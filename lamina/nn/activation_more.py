"""More activation layers: Hardshrink, Softshrink, RReLU and Softmax2d, each the function
of lamina.functions of the same name in a layer, as in PyTorch."""

from __future__ import annotations

from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer


@register_layer("Hardshrink")
class Hardshrink(Layer):
    """x where |x| > lambd, else 0.

    Examples:
        >>> nn.Hardshrink()(lm.tensor([-1.0, 0.2])).tolist()
        [-1.0, 0.0]
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, x: Tensor) -> Tensor:
        return F.hardshrink(x, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"

    def get_config(self) -> dict[str, Any]:
        return {"lambd": self.lambd}


@register_layer("Softshrink")
class Softshrink(Hardshrink):
    """x moved toward 0 by lambd, 0 within lambd of it.

    Examples:
        >>> nn.Softshrink(0.5)(lm.tensor([-1.0, 0.2])).tolist()
        [-0.5, 0.0]
    """

    def forward(self, x: Tensor) -> Tensor:
        return F.softshrink(x, self.lambd)


@register_layer("RReLU")
class RReLU(Layer):
    """Leaky ReLU with a negative slope drawn from U(lower, upper) per element in
    training, (lower + upper) / 2 in evaluation.

    Examples:
        >>> nn.RReLU(0.25, 0.25)(lm.tensor([-2.0, 1.0])).tolist()
        [-0.5, 1.0]
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.rrelu(x, self.lower, self.upper, self.training)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace
                                                             else "")

    def get_config(self) -> dict[str, Any]:
        return {"lower": self.lower, "upper": self.upper}


@register_layer("Softmax2d")
class Softmax2d(Layer):
    """Softmax over the channels of (N, C, H, W) or (C, H, W) input.

    Examples:
        >>> nn.Softmax2d()(lm.zeros(1, 2, 1, 1)).flatten().tolist()
        [0.5, 0.5]
    """

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected (N, C, H, W) or (C, H, W) input; got "
                             f"shape {tuple(x.shape)}")
        return F.softmax(x, -3)
