"""Elementwise unary ops: neg, exp, log, sqrt, abs and clip (PyTorch's clamp). exp, log
and sqrt of integers are floats of the default dtype, as in PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions.operands import floating


class Neg(Function):
    complex_rule = "holomorphic"

    def forward(self, x: Any) -> Any:
        return -x

    def backward(self, gy: Any) -> Any:
        return -gy


class Exp(Function):
    complex_rule = "holomorphic"

    def forward(self, x: Any) -> Any:
        y = np.exp(x)
        self.save_for_backward(y)
        return y

    def backward(self, gy: Any) -> Any:
        return gy * self.saved_tensors[0]


class Log(Function):
    complex_rule = "holomorphic"
    # log(0) is -inf and log(-1) NaN, quietly, as in PyTorch (and their gradients inf)
    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x)

    def backward(self, gy: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return gy / self.saved_tensors[0]


class Sqrt(Function):
    complex_rule = "holomorphic"

    def forward(self, x: Any) -> Any:
        with np.errstate(invalid="ignore"):  # sqrt(-1) is NaN, quietly, as in PyTorch
            y = np.sqrt(x)
        self.save_for_backward(y)
        return y

    def backward(self, gy: Any) -> Any:
        with np.errstate(divide="ignore", invalid="ignore"):
            return gy / (2 * self.saved_tensors[0])


class Abs(Function):
    complex_rule = "own"

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return np.abs(x)

    def backward(self, gy: Any) -> Any:
        return gy * np.sign(self.saved_tensors[0])


class Clip(Function):
    def __init__(self, lo: float | None, hi: float | None) -> None:
        self.lo, self.hi = lo, hi

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        return np.clip(x, self.lo, self.hi)

    def backward(self, gy: Any) -> Any:
        (x,) = self.saved_tensors
        inside = np.ones(x.shape, dtype=bool)
        if self.lo is not None:
            inside &= x >= self.lo
        if self.hi is not None:
            inside &= x <= self.hi
        return gy * inside


def neg(x: Tensor) -> Tensor:
    """-x."""
    return Neg().apply(x)


def exp(x: Tensor) -> Tensor:
    """e ** x, elementwise."""
    return Exp().apply(floating(x))


def log(x: Tensor) -> Tensor:
    """Natural logarithm, elementwise."""
    return Log().apply(floating(x))


def sqrt(x: Tensor) -> Tensor:
    """Square root, elementwise."""
    return Sqrt().apply(floating(x))


def abs(x: Tensor) -> Tensor:
    """|x|, elementwise; the gradient at 0 is 0 (sign(0))."""
    return Abs().apply(x)


def clip(x: Tensor, lo: float | None = None, hi: float | None = None) -> Tensor:
    """Clamp x to [lo, hi] (PyTorch's `clamp`); the gradient passes where lo <= x <= hi."""
    return Clip(lo, hi).apply(x)
