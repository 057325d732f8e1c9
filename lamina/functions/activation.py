"""Activation functions, elementwise: ReLU, leaky ReLU, ELU, sigmoid, SiLU, tanh,
softplus. GELU is in lamina.functions.activation_gelu, the softmax family in
lamina.functions.activation_softmax."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions.operands import floating

_CLIP_FAST = (np.dtype(np.float32), np.dtype(np.float64))


def clamp(x: Any, low: float = -np.inf, high: float = np.inf, out: Any = None) -> Any:
    """x limited to [low, high], NaN kept. For large float32/64 arrays this is np.clip
    with both bounds, since NumPy's maximum or minimum against a scalar runs a scalar
    loop (benchmarks/RESULTS.md has the figures); on small ones clip's Python wrapping
    costs more than it saves. Other dtypes keep maximum and minimum, which clip does not
    beat for float16 and which cannot widen an int."""
    if x.dtype in _CLIP_FAST and x.size >= 4096:
        return np.clip(x, low, high, out=out)
    if low != -np.inf:
        x = np.maximum(x, low, out=out)
    return x if high == np.inf else np.minimum(x, high, out=out)


def sigmoid_array(x: Any, out: Any = None) -> Any:
    """1 / (1 + e^-x) as 0.5 * tanh(x / 2) + 0.5: never overflows. Into `out` (x itself
    for an in-place sigmoid) where given, in its passes, with no temporary."""
    if out is None:
        return np.tanh(x * 0.5) * 0.5 + 0.5
    np.multiply(x, 0.5, out=out)
    np.tanh(out, out=out)
    out *= 0.5
    out += 0.5
    return out


def softplus_array(x: Any) -> Any:
    """log(1 + e^x) as max(x, 0) + log1p(e^-|x|): no overflow for large |x|."""
    y = np.log1p(np.exp(-np.abs(x)))
    y += clamp(x, 0)
    return y


class ReLU(Function):
    keeps_inputs = False  # backward, and its derivative rule, read the output it saves

    def forward(self, x: Any) -> Any:
        if not self.needs_input_grad[0]:  # nothing to keep: one pass of np.clip
            return clamp(x, 0)
        # Backward reads y, as PyTorch's does: the op that reads y next mostly keeps it for
        # its own backward (a convolution's or a linear layer's weight gradient), so
        # keeping it here costs nothing, where a mask of its signs would cost a byte an
        # element more.
        compiled = fused.loaded() if x.size >= 4096 else None
        if compiled is not None and fused.fits(x, contiguous=False):
            y = np.empty_like(x)  # in x's memory order (channel-major after a convolution)
            flat = fused.flat_memory(x, y)
            if flat is not None:
                fused.in_pieces(compiled.relu, *flat)
                self.save_for_backward(y)
                return y
        y = clamp(x, 0)
        self.save_for_backward(y)
        return y

    def backward(self, gy: Any) -> Any:
        kept = self.saved_tensors[0]
        if (kept.dtype in (bool, gy.dtype) and gy.dtype == np.float32
                and kept.size >= 4096):  # y, or its mask where a plan keeps that
            compiled = fused.loaded()
            gx = np.empty_like(kept, gy.dtype)
            flat = None if compiled is None else fused.flat_memory(gy, kept, gx)
            if flat is not None:
                fused.in_pieces(compiled.relu_backward, *flat)
                return gx
        return gy * (kept > 0 if kept.dtype != bool else kept)


def _one_or(positive: Any, other: Any, dtype: Any) -> Any:
    """1 where `positive` (a boolean array), else `other` (finite): np.where's result
    without its per-element branches, which are slow on a random mask. Exact, since one
    of the two terms of the blend is 0."""
    k = np.array(positive, dtype)
    k += (1 - k) * other
    return k


class LeakyReLU(Function):
    def __init__(self, slope: float) -> None:
        self.slope = slope

    def forward(self, x: Any) -> Any:
        # As ReLU: keep a boolean mask (1 byte an element), not x.
        self.save_for_backward(x > 0 if self.needs_input_grad[0] else None)
        # x or slope*x, whichever the sign of x picks: the larger for slope <= 1. fmax, not
        # maximum: at slope 0, x = +inf gives +inf * 0 = NaN, which fmax passes over.
        pick = np.fmax if self.slope <= 1 else np.fmin
        return pick(x, x * x.dtype.type(self.slope))

    def backward(self, gy: Any) -> Any:
        k = _one_or(self.saved_tensors[0], gy.dtype.type(self.slope), gy.dtype)
        k *= gy
        return k


class ELU(Function):
    def __init__(self, alpha: float) -> None:
        self.alpha = alpha

    def forward(self, x: Any) -> Any:
        alpha = x.dtype.type(self.alpha)
        neg = alpha * np.expm1(clamp(x, high=0))  # 0 where x > 0: y is one term plus zero
        y = neg + clamp(x, 0)
        if not self.needs_input_grad[0]:
            self.save_for_backward(None)
            return y
        # dy/dx: 1 where x > 0, else alpha*e^x = neg + alpha (finite everywhere).
        neg += alpha
        self.save_for_backward(_one_or(x > 0, neg, x.dtype))
        return y

    def backward(self, gy: Any) -> Any:
        return gy * self.saved_tensors[0]


class Sigmoid(Function):
    complex_rule = "holomorphic"
    keeps_inputs = False  # backward, and its derivative rule, read the output it saves

    def forward(self, x: Any, *, out: Any = None) -> Any:
        """out: an array of x's shape to write the result into (NumPy's out=)."""
        # 0.5 * tanh(x/2) + 0.5 never overflows, unlike 1 / (1 + exp(-x)).
        half = x.dtype.type(0.5)
        # asarray: a 0-d input gives a NumPy scalar, which cannot be updated in place.
        y = np.asarray(np.multiply(x, half, out=out))
        np.tanh(y, out=y)
        y *= half
        y += half
        self.save_for_backward(y)
        return y

    def backward(self, gy: Any) -> Any:
        (y,) = self.saved_tensors
        return gy * y * (1 - y)


class SiLU(Function):
    def forward(self, x: Any) -> Any:
        half = x.dtype.type(0.5)
        s = np.tanh(x * half)  # sigmoid(x) = 0.5 * tanh(x / 2) + 0.5, which never overflows
        s *= half
        s += half
        self.save_for_backward(x, s)
        return x * s

    def backward(self, gy: Any) -> Any:
        x, s = self.saved_tensors
        # d/dx x * s(x) = s + x * s * (1 - s) = s * (1 + x * (1 - s))
        return gy * s * (1 + x * (1 - s))


class Tanh(Function):
    complex_rule = "holomorphic"
    keeps_inputs = False  # as Sigmoid

    def forward(self, x: Any, *, out: Any = None) -> Any:
        """out: an array of x's shape to write the result into (NumPy's out=)."""
        y = np.tanh(x, out=out)
        self.save_for_backward(y)
        return y

    def backward(self, gy: Any) -> Any:
        (y,) = self.saved_tensors
        return gy * (1 - y * y)


class Softplus(Function):
    """log(1 + e^x); with `threshold`, x itself where x > threshold (PyTorch's switch)."""

    def __init__(self, threshold: float | None = None) -> None:
        self.threshold = threshold

    def forward(self, x: Any) -> Any:
        self.save_for_backward(x)
        y = softplus_array(x)
        if self.threshold is not None:
            y = np.where(x > self.threshold, x, y)
        return y

    def backward(self, gy: Any) -> Any:
        (x,) = self.saved_tensors
        g = np.tanh(x * x.dtype.type(0.5)) * x.dtype.type(0.5) + x.dtype.type(0.5)
        if self.threshold is not None:
            g = np.where(x > self.threshold, x.dtype.type(1), g)
        return gy * g


def relu(x: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0) elementwise; the gradient at 0 is 0."""
    return ReLU().apply(x)


def leaky_relu(x: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, negative_slope * x otherwise."""
    return LeakyReLU(negative_slope).apply(x)


def elu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return ELU(alpha).apply(x)


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x)), computed without overflow."""
    return Sigmoid().apply(floating(x))


def silu(x: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (also called swish)."""
    return SiLU().apply(x)


def tanh(x: Tensor) -> Tensor:
    """Hyperbolic tangent, elementwise."""
    return Tanh().apply(floating(x))


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, computed stably; its derivative is sigmoid(beta x).
    Where beta x > threshold, x itself (gradient 1), as PyTorch's."""
    if beta != 1:
        return Softplus(threshold).apply(x * beta) / beta
    return Softplus(threshold).apply(x)
