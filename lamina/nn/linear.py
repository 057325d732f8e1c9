"""Fully connected layers: Linear, and Bilinear (a product of two inputs)."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn import init
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


@register_layer("Linear")
class Linear(Layer):
    """y = x @ weight.T + bias.

    Args:
        in_features: size of each input's last axis.
        out_features: size of each output's last axis.
        bias: learn an additive bias.

    Shapes: input (..., in_features) -> output (..., out_features); weight
    (out_features, in_features), bias (out_features,), initialised as PyTorch does.

    Examples:
        >>> fc = nn.Linear(784, 10)
        >>> fc(lm.tensor(np.zeros((32, 784), np.float32))).shape
        (32, 10)
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True) -> None:
        super().__init__()
        if in_features < 1 or out_features < 1:
            raise ValueError(f"Linear: features must be >= 1; got ({in_features}, {out_features})")
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(np.empty((out_features, in_features), np.float32))
        self.bias = Parameter(np.empty(out_features, np.float32)) if bias else None
        init.default_linear_(self.weight, self.bias, in_features)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        return f"in_features={shape[-1]}" if shape and shape[-1] != self.in_features else None

    def get_config(self) -> dict[str, Any]:
        return {"in_features": self.in_features, "out_features": self.out_features,
                "bias": self.bias is not None}


@register_layer("NonDynamicallyQuantizableLinear")
class NonDynamicallyQuantizableLinear(Linear):
    """A Linear: PyTorch's class of `MultiheadAttention.out_proj`, named so that its
    quantization tools leave it alone; here it only keeps `print(model)` as PyTorch's.

    Examples:
        >>> nn.MultiheadAttention(4, 2).out_proj
        NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=True)
    """


@register_layer("Bilinear")
class Bilinear(Layer):
    """y = x1^T A x2 + b: weight (out_features, in1_features, in2_features), initialised
    U(-1/sqrt(in1), 1/sqrt(in1)) as PyTorch does.

    Examples:
        >>> nn.Bilinear(3, 4, 5)(lm.ones(2, 3), lm.ones(2, 4)).shape
        lamina.Size([2, 5])
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True) -> None:
        super().__init__()
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(np.empty((out_features, in1_features, in2_features),
                                         np.float32))
        self.bias = Parameter(np.empty(out_features, np.float32)) if bias else None
        bound = 1 / np.sqrt(in1_features)
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")

    def get_config(self) -> dict[str, Any]:
        return {"in1_features": self.in1_features, "in2_features": self.in2_features,
                "out_features": self.out_features, "bias": self.bias is not None}
