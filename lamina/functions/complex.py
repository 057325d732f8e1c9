"""Complex numbers' own ops: real and imaginary parts, conjugate, angle, the views between
a complex tensor and its (..., 2) real pairs, and complex / polar from real parts.

Each backward follows PyTorch's rule for complex operands (lamina/autograd/complex_rules.py):
the gradient of a real loss with respect to z = a + ib is dL/da + i dL/db.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import state
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import sum_to
from lamina.functions.operands import astype


def _complex_of(d: np.dtype) -> np.dtype:
    return np.result_type(d, np.complex64)


class Real(Function):
    complex_rule = "own"

    def forward(self, z: Any) -> Any:
        return z.real

    def backward(self, gy: Any) -> Any:
        return gy.astype(_complex_of(gy.dtype))


class Imag(Function):
    complex_rule = "own"

    def forward(self, z: Any) -> Any:
        return z.imag

    def backward(self, gy: Any) -> Any:
        return 1j * gy.astype(_complex_of(gy.dtype))


class Conj(Function):
    complex_rule = "own"

    def forward(self, z: Any) -> Any:
        return np.conj(z)

    def backward(self, gy: Any) -> Any:
        return np.conj(gy)


class Angle(Function):
    """atan2(imag, real); a real input's angle (0 or pi) has a zero gradient, as PyTorch's."""

    complex_rule = "own"

    def forward(self, z: Any) -> Any:
        self.save_for_backward(z)
        if z.dtype.kind != "c":
            return np.where(z < 0, np.pi, np.where(np.isnan(z), z, 0)).astype(z.dtype)
        return np.angle(z)

    def backward(self, gy: Any) -> Any:
        (z,) = self.saved_tensors
        if z.dtype.kind != "c":
            return np.zeros_like(z)
        size = z.real * z.real + z.imag * z.imag
        with np.errstate(divide="ignore", invalid="ignore"):
            g = np.where(size == 0, 0, gy * 1j * z / size)  # d angle = (-b da + a db) / |z|^2
        return g.astype(z.dtype, copy=False)


def real_pairs(z: Any) -> Any:
    """A complex array as its (..., 2) real and imaginary parts: a view of its memory."""
    part = z.real
    return np.lib.stride_tricks.as_strided(
        part, (*z.shape, 2), (*part.strides, part.itemsize), writeable=z.flags.writeable)


class ViewAsReal(Function):
    complex_rule = "own"

    def forward(self, z: Any) -> Any:
        return real_pairs(z)

    def backward(self, gy: Any) -> Any:
        return gy[..., 0] + 1j * gy[..., 1]


class ViewAsComplex(Function):
    complex_rule = "own"

    def forward(self, x: Any) -> Any:
        if x.ndim == 0 or x.shape[-1] != 2:
            raise ShapeError(f"view_as_complex: expected the last dim of size 2 (real, imag); "
                             f"got shape {x.shape}")
        if x.dtype not in (np.float32, np.float64):
            raise TypeError(f"view_as_complex: expected a float32 or float64 tensor; got "
                            f"{x.dtype}")
        if x.strides[-1] != x.itemsize or any(s % (2 * x.itemsize) for s in x.strides[:-1]):
            raise RuntimeError("view_as_complex: the tensor's last dim must be contiguous and "
                               "its other strides even (in elements); call .contiguous() first")
        state.complex_seen = True  # ops now check their operands (complex_rules)
        return x.view(_complex_of(x.dtype))[..., 0]

    def backward(self, gy: Any) -> Any:
        return np.stack([gy.real, gy.imag], -1)


class Complex(Function):
    complex_rule = "own"

    def forward(self, re: Any, im: Any) -> Any:
        state.complex_seen = True
        out = np.empty(np.broadcast_shapes(re.shape, im.shape), _complex_of(re.dtype))
        out.real, out.imag = re, im
        self.shapes = re.shape, im.shape
        return out

    def backward(self, gy: Any) -> tuple[Any, Any]:
        return (sum_to(np.ascontiguousarray(gy.real), self.shapes[0]),
                sum_to(np.ascontiguousarray(gy.imag), self.shapes[1]))


def real(x: Tensor) -> Tensor:
    """The real part of a complex tensor, a view as PyTorch's; a real tensor itself.

    Examples:
        >>> lm.real(lm.tensor([1 + 2j]))
        tensor([1.])
    """
    return Real().apply(x) if x.array.dtype.kind == "c" else x


def imag(x: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, a view as PyTorch's.

    Examples:
        >>> lm.imag(lm.tensor([1 + 2j]))
        tensor([2.])
    """
    if x.array.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return Imag().apply(x)


def conj(x: Tensor) -> Tensor:
    """The complex conjugate; a real tensor itself (Tensor.conj)."""
    return Conj().apply(x) if x.array.dtype.kind == "c" else x


def angle(x: Tensor) -> Tensor:
    """The argument of each element, atan2(imag, real), in radians (for a real tensor: 0, or
    pi where it is negative)."""
    if x.array.dtype.kind in "iub":
        from lamina import dtypes

        x = astype(x, dtypes.get_default_dtype())
    return Angle().apply(x)


def view_as_real(x: Tensor) -> Tensor:
    """A complex tensor as real pairs, shape (..., 2): real and imaginary parts, sharing its
    memory.

    Examples:
        >>> lm.view_as_real(lm.tensor([1 + 2j]))
        tensor([[1., 2.]])
    """
    if x.array.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return ViewAsReal().apply(x)


def view_as_complex(x: Tensor) -> Tensor:
    """A float tensor of shape (..., 2) as complex numbers, sharing its memory.

    Examples:
        >>> lm.view_as_complex(lm.tensor([[1.0, 2.0]]))
        tensor([1.+2.j])
    """
    return ViewAsComplex().apply(x)


def complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A001 - PyTorch's name
    """real + i imag, from two float tensors of one dtype (broadcast).

    Examples:
        >>> lm.complex(lm.tensor([1.0]), lm.tensor([-2.0]))
        tensor([1.-2.j])
    """
    if real.dtype != imag.dtype or real.dtype.kind != "f" or real.dtype == np.float16:
        raise RuntimeError(f"complex: expected real and imag of one dtype, float32 or float64; "
                           f"got {real.dtype} and {imag.dtype}")
    return Complex().apply(real, imag)


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002 - PyTorch's name
    """abs * (cos(angle) + i sin(angle)), from two float tensors of one dtype.

    Examples:
        >>> lm.polar(lm.tensor([2.0]), lm.tensor([0.0]))
        tensor([2.+0.j])
    """
    return complex(abs * angle.cos(), abs * angle.sin())
