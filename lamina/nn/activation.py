"""Activation layers: stateless wrappers of lamina.functions, so they fit in a Sequential."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


@register_layer("ReLU")
class ReLU(Layer):
    """max(x, 0). `inplace` is accepted (lamina computes out of place: same values and
    gradients, the input left as it was) and is not part of the config."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


@register_layer("LeakyReLU")
class LeakyReLU(Layer):
    """x for x > 0, negative_slope * x otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                           else "")

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

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha)

    def get_config(self) -> dict[str, Any]:
        return {"alpha": self.alpha}


@register_layer("SiLU")
class SiLU(Layer):
    """x * sigmoid(x) (swish)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)


@register_layer("Softplus")
class Softplus(Layer):
    """log(1 + exp(beta * x)) / beta, a smooth ReLU; computed stably for any x."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        if not beta > 0:
            raise ValueError(f"Softplus: beta must be > 0; got {beta}")
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        y = F.softplus(x) if self.beta == 1 else F.softplus(x * self.beta) / self.beta
        if self.threshold == 20.0 and x.dtype == np.float32:
            return y  # there, softplus(x) rounds to x above the threshold anyway
        return F.where(x * self.beta > self.threshold, x, y)  # PyTorch's linear region

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"

    def get_config(self) -> dict[str, Any]:
        return {"beta": self.beta, "threshold": self.threshold}


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
    """softmax along `dim` (`axis`, lamina's earlier name, is accepted)."""

    def __init__(self, dim: int | None = None, axis: int | None = None) -> None:
        super().__init__()
        self.dim = dim if dim is not None else axis

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.dim)

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim}


@register_layer("LogSoftmax")
class LogSoftmax(Softmax):
    """log(softmax) along `dim`, computed stably."""

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, self.dim)


@register_layer("Softmin")
class Softmin(Softmax):
    """softmax(-x) along `dim`."""

    def forward(self, x: Tensor) -> Tensor:
        return F.softmin(x, self.dim)


@register_layer("GLU")
class GLU(Layer):
    """a * sigmoid(b), the halves of the input along `dim`."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.glu(x, self.dim)

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim}


@register_layer("Hardtanh")
class Hardtanh(Layer):
    """x clamped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: Tensor) -> Tensor:
        return F.hardtanh(x, self.min_val, self.max_val)

    def get_config(self) -> dict[str, Any]:
        return {"min_val": self.min_val, "max_val": self.max_val}


@register_layer("Threshold")
class Threshold(Layer):
    """x where x > threshold, else value."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value = threshold, value

    def forward(self, x: Tensor) -> Tensor:
        return F.threshold(x, self.threshold, self.value)

    def get_config(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "value": self.value}


@register_layer("CELU")
class CELU(Layer):
    """max(0, x) + min(0, alpha (exp(x / alpha) - 1))."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.celu(x, self.alpha)

    def get_config(self) -> dict[str, Any]:
        return {"alpha": self.alpha}


@register_layer("PReLU")
class PReLU(Layer):
    """x where x >= 0, else a * x, with `a` learnt: one value, or one per channel."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(np.full(num_parameters, init, np.float32))

    def forward(self, x: Tensor) -> Tensor:
        # the input's rank, for ONNX export: its PRelu broadcasts the slope from the right
        self.__dict__["input_rank"] = x.ndim
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"

    def get_config(self) -> dict[str, Any]:
        return {"num_parameters": self.num_parameters, "init": self.init}


def _stateless(name: str, fn: Any, doc: str, inplace: bool = True) -> type[Layer]:
    """An activation layer with no options (PyTorch's `inplace` accepted where it has one)."""

    def __init__(self: Layer, inplace: bool = False) -> None:
        Layer.__init__(self)

    def forward(self: Layer, x: Tensor) -> Tensor:
        return fn(x)

    forward.__doc__ = f"`F.{fn.__name__}(x)`."
    body = {"forward": forward, "__doc__": doc}
    if inplace:
        body["__init__"] = __init__
    return register_layer(name)(type(name, (Layer,), body))


ReLU6 = _stateless("ReLU6", F.relu6, "min(max(x, 0), 6).")
Hardsigmoid = _stateless("Hardsigmoid", F.hardsigmoid, "relu6(x + 3) / 6.")
Hardswish = _stateless("Hardswish", F.hardswish, "x * relu6(x + 3) / 6.")
Mish = _stateless("Mish", F.mish, "x * tanh(softplus(x)).")
SELU = _stateless("SELU", F.selu, "Self-normalising ELU: scale * elu(x, alpha).")
Softsign = _stateless("Softsign", F.softsign, "x / (1 + |x|).", inplace=False)
Tanhshrink = _stateless("Tanhshrink", F.tanhshrink, "x - tanh(x).", inplace=False)
LogSigmoid = _stateless("LogSigmoid", F.logsigmoid, "log(sigmoid(x)), stably.", inplace=False)
