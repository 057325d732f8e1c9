"""GELU, x * Phi(x) with Phi the standard normal CDF, exact (by erf) or in its tanh form;
and the exact erf it needs, which lamina.functions.elementwise's erf shares."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina import fused, parallel
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions.error_functions import scipy_special


def erf_into(x: Any, out: Any) -> None:
    """erf(x) into out, exact: SciPy's (faster), else math.erf an element at a time. SciPy
    is imported here, at the first exact erf, not by `import lamina`: it holds tens of MB
    a process that never takes one (float32 GELU has its own kernel) need not pay."""
    sp = scipy_special()
    if sp is None:  # pragma: no cover - depends on the machine
        out[...] = np.vectorize(math.erf, otypes=[np.float64])(x)
    else:
        sp.erf(x, out=out)


class GELU(Function):
    """x * Phi(x), by erf or in its tanh form, computed in the input's dtype: float32
    stays float32 (a float64 constant would promote every pass).

    The erf form of a C-contiguous float32 array is one fused kernel (lamina.fused), its
    Phi within 4e-7 (the formula PyTorch's vectorized CPU kernel uses too). It keeps x
    alone, as PyTorch's does, and its backward makes the derivative again in one fused
    pass: the layer after GELU keeps the output, so keeping the derivative too would hold
    three arrays of the activation's size where two do (a GPT's MLP: a sixth of its
    activations). Other arrays and dtypes take the exact erf, and keep x and Phi(x) (or
    the tanh) for a backward in NumPy's passes."""

    def __init__(self, approximate: str) -> None:
        if approximate not in ("none", "tanh"):
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh'; got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Any) -> Any:
        if x.dtype.kind != "f":  # integers compute in float64, as np.tanh would
            x = x.astype(np.float64)
        if self.approximate == "none" and fused.fits(x):
            self.save_for_backward(x if self.needs_input_grad[0] else None)
            return fused.gelu(x)
        c = x.dtype.type
        if self.approximate == "tanh":  # tanh(sqrt(2/pi) * x * (1 + 0.044715 x^2))
            part = _square(x)
            part *= c(0.044715)
            part += c(1)
            part *= x
            part *= c(math.sqrt(2 / math.pi))
            part = np.tanh(part, out=part)
        else:  # Phi(x) = (1 + erf(x / sqrt 2)) / 2
            part = _erf_scaled(x, c(1 / math.sqrt(2)))
            part += c(1)
            part *= c(0.5)
        self.save_for_backward(x, part)
        if self.approximate == "tanh":
            y = part + c(1)
            y *= c(0.5)
            y *= x
            return y
        return x * part

    def backward(self, gy: Any) -> Any:
        if len(self.saved_tensors) == 1:  # the fused kernel's: x alone
            (x,) = self.saved_tensors
            return fused.gelu_grad(x, np.ascontiguousarray(gy, x.dtype))
        x, part = self.saved_tensors
        c = x.dtype.type
        x2 = _square(x)
        if self.approximate == "tanh":
            # d/dx [x (1 + t) / 2] = (1 + t) / 2 + x (1 - t^2) k (1 + 3 a x^2) / 2
            x2 *= c(3 * 0.044715)
            x2 += c(1)
            x2 *= c(0.5 * math.sqrt(2 / math.pi))
            x2 *= x
            x2 *= c(1) - np.square(part)
            x2 += c(0.5)
            x2 += c(0.5) * part
        else:  # d/dx [x Phi(x)] = Phi(x) + x phi(x)
            x2 *= c(-0.5)
            np.exp(x2, out=x2)
            x2 *= c(1 / math.sqrt(2 * math.pi))
            x2 *= x
            x2 += part
        x2 *= gy
        return x2


def _erf_scaled(x: Any, scale: Any) -> Any:
    """erf(x * scale) in x's dtype, in pieces over lamina's threads: erf is no SIMD kernel
    (about 10 ns an element, against 0.2 for tanh), so a large GELU is bound by it."""
    out = np.empty_like(x, order="C")
    flat, into = x.reshape(-1), out.reshape(-1)
    parallel.pieces(flat.size, lambda lo, hi: erf_into(flat[lo:hi] * scale, into[lo:hi]))
    return out


def _square(x: Any) -> Any:
    """x * x as a new array, 0-d included (np.square gives a scalar there), to update in place."""
    return np.multiply(x, x, out=np.empty_like(x))


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) with Phi the standard normal CDF; approximate='tanh' uses the tanh form."""
    return GELU(approximate).apply(x)
