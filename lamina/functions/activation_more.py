"""More of PyTorch's activations, built from other ops: hardshrink, softshrink, rrelu,
gumbel_softmax, and the in-place functional forms (`F.relu_`, `F.elu_`, ...), which write
the activation into their input as `Tensor.relu_()` does."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import state
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions import activation as _act
from lamina.functions import activation_composite as _comp
from lamina.functions.math import where


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """input where |input| > lambd, else 0.

    Examples:
        >>> F.hardshrink(lm.tensor([-1.0, 0.2, 0.7]))
        tensor([-1.0000,  0.0000,  0.7000])
    """
    return where(input.abs() > lambd, input, 0.0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """input moved toward 0 by lambd, and 0 where |input| <= lambd.

    Examples:
        >>> F.softshrink(lm.tensor([-1.0, 0.2, 0.75]))
        tensor([-0.5000,  0.0000,  0.2500])
    """
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, 0.0))


class RandomSlopes(Function):
    """rrelu in training: x where x >= 0, else x times a slope drawn from U(lower, upper)
    for the element. An op that draws, so a plan draws anew at every step."""

    draws_random = True

    def __init__(self, lower: float, upper: float) -> None:
        self.lower, self.upper = lower, upper

    def forward(self, x: Any) -> Any:
        slopes = self.lower + (self.upper - self.lower) * state.rng().random(x.shape)
        self.factor = np.where(x >= 0, 1, slopes).astype(x.dtype)
        return x * self.factor

    def backward(self, gy: Any) -> Any:
        return gy * self.factor


class GumbelNoise(Function):
    """x plus standard Gumbel noise, -log(E) with E exponential; the gradient passes
    unchanged. An op that draws, so a plan draws anew at every step."""

    draws_random = True

    def forward(self, x: Any) -> Any:
        return x - np.log(state.rng().exponential(1.0, x.shape)).astype(x.dtype)

    def backward(self, gy: Any) -> Any:
        return gy


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, inplace: bool = False) -> Tensor:
    """Leaky ReLU whose negative slope is drawn from U(lower, upper) for each element in
    training, and is (lower + upper) / 2 otherwise.

    Examples:
        >>> F.rrelu(lm.tensor([-2.0, 1.0]), 0.25, 0.25)
        tensor([-0.5000,  1.0000])
    """
    if not training:
        return _act.leaky_relu(input, (lower + upper) / 2)
    return RandomSlopes(lower, upper).apply(input)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax (concrete) distribution: softmax((logits + g) / tau)
    with g Gumbel noise. With `hard`, the one-hot of its largest entry, whose gradient is
    the soft sample's (the straight-through estimator).

    Examples:
        >>> y = F.gumbel_softmax(lm.zeros(2, 3), hard=True)
        >>> y.sum(-1).tolist()
        [1.0, 1.0]
    """
    from lamina.creation import as_tensor

    y = (GumbelNoise().apply(logits) / tau).softmax(dim)
    if not hard:
        return y
    index = y.detach().argmax(dim, keepdim=True)
    one_hot = as_tensor(np.zeros(tuple(y.shape), y.dtype)).scatter(dim, index, 1.0)
    return one_hot - y.detach() + y


def _inplace(fn: Any, name: str) -> Any:
    def inplace(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
        kwargs.pop("inplace", None)
        return input._inplace(lambda t: fn(t, *args, **kwargs))
    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = (f"`F.{fn.__name__}` written into `input`; returns `input`.\n\n"
                       f"Example:\n    >>> x = lm.tensor([-1.0, 2.0])\n"
                       f"    >>> F.{name}(x) is x\n    True")
    return inplace


relu_ = _inplace(_act.relu, "relu_")
elu_ = _inplace(_act.elu, "elu_")
leaky_relu_ = _inplace(_act.leaky_relu, "leaky_relu_")
hardtanh_ = _inplace(_comp.hardtanh, "hardtanh_")
selu_ = _inplace(_comp.selu, "selu_")
celu_ = _inplace(_comp.celu, "celu_")
rrelu_ = _inplace(rrelu, "rrelu_")


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """`F.threshold` written into `input`; returns `input`.

    Examples:
        >>> x = lm.tensor([-1.0, 2.0])
        >>> F.threshold_(x, 0.0, 5.0).tolist()
        [5.0, 2.0]
    """
    return input._inplace(lambda t: _comp.threshold(t, threshold, value))
