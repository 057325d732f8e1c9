"""`lamina.fft`, PyTorch's `torch.fft`: discrete Fourier transforms with their gradients.

Each transform takes PyTorch's arguments: the sizes (`n`, `s`) the input is cropped or
zero-padded to, the dims, and `norm` ("backward": the inverse scales by 1/n; "forward": the
forward does; "ortho": both by 1/sqrt(n)). Real inputs give complex64 (float32) or complex128
(float64) spectra; integers are taken as the default float dtype.

    >>> x = lm.tensor([1.0, 2.0, 3.0, 4.0])
    >>> lm.fft.rfft(x)
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    >>> lm.fft.irfft(lm.fft.rfft(x), n=4)
    tensor([1., 2., 3., 4.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes
from lamina.autograd.tensor import Tensor
from lamina.fft.frequencies import fftfreq, fftshift, ifftshift, rfftfreq
from lamina.functions.complex import conj
from lamina.functions.operands import floating
from lamina.functions.spectral import _DUAL, FFT, IRFFT, RFFT

_NORMS = tuple(_DUAL)


def _input(x: Any, op: str, real: bool = False) -> Tensor:
    x = x if isinstance(x, Tensor) else Tensor(dtypes.as_array(x))
    if x.array.dtype == np.float16:
        raise TypeError(f"fft.{op}: float16 is not supported (nor on PyTorch's CPU); use "
                        "x.float()")
    if real and x.array.dtype.kind == "c":
        raise RuntimeError(f"fft.{op}: expects a real input tensor, but got {x.dtype}; take "
                           "x.real, or use fft.fft for a complex input")
    return floating(x)  # integers and booleans as the default float dtype


def _norm(norm: str | None) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f"Invalid normalization mode: {norm!r}; expected one of {_NORMS}")
    return norm


def _plan(x: Tensor, s: Any, dim: Any, op: str, half: bool = False) -> tuple[Any, Any]:
    """(axes, sizes) of an n-dim transform: `dim` (every dim, or the last len(s) where s is
    given), sizes from `s` (-1: the input's) or the input's; `half` (a c2r transform) makes
    the last size 2 * (m - 1) from the m frequencies given."""
    if dim is None:
        dim = range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim)
    axes = tuple(d % x.ndim if -x.ndim <= d < x.ndim else _bad_dim(op, d, x.ndim)
                 for d in ([dim] if isinstance(dim, int) else dim))
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"fft.{op}: dims must be unique; got {tuple(dim)}")
    if s is not None and len(s) != len(axes):
        raise RuntimeError(f"fft.{op}: when given, dim and shape arguments must have the "
                           f"same length; got s={tuple(s)} and dim={tuple(dim)}")
    sizes = [x.shape[ax] for ax in axes]
    if half:
        sizes[-1] = 2 * (sizes[-1] - 1)
    for i, n in enumerate(s or ()):
        if n != -1:
            sizes[i] = int(n)
    if any(n < 1 for n in sizes):
        raise RuntimeError(f"fft.{op}: invalid number of data points ({min(sizes)}) "
                           "specified")
    return axes, tuple(sizes)


def _bad_dim(op: str, d: int, ndim: int) -> int:
    raise IndexError(f"fft.{op}: dim {d} is out of range for a {ndim}-d tensor")


def _one(n: Any) -> Any:
    return None if n is None else (n,)


def _c2c(input: Any, s: Any, dim: Any, norm: Any, op: str, inverse: bool) -> Tensor:  # noqa: A002
    x = _input(input, op)
    axes, sizes = _plan(x, s, dim, op)
    return FFT(axes, sizes, _norm(norm), inverse).apply(x)


def _r2c(input: Any, s: Any, dim: Any, norm: Any, op: str) -> Tensor:  # noqa: A002
    x = _input(input, op, real=True)
    axes, sizes = _plan(x, s, dim, op)
    return RFFT(axes, sizes, _norm(norm)).apply(x)


def _c2r(input: Any, s: Any, dim: Any, norm: Any, op: str) -> Tensor:  # noqa: A002
    x = _input(input, op)
    axes, sizes = _plan(x, s, dim, op, half=True)
    return IRFFT(axes, sizes, _norm(norm)).apply(x)


def _hermitian(input: Any, s: Any, dim: Any, norm: Any, op: str) -> Tensor:  # noqa: A002
    """hfft: the c2r transform of the conjugate, under the dual normalisation."""
    return _c2r(conj(_input(input, op)), s, dim, _DUAL[_norm(norm)], op)


def _inverse_hermitian(input: Any, s: Any, dim: Any, norm: Any, op: str) -> Tensor:  # noqa: A002
    return conj(_r2c(input, s, dim, _DUAL[_norm(norm)], op))


def fftn(input: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The n-dim discrete Fourier transform over `dim` (all dims by default).

    Examples:
        >>> lm.fft.fftn(lm.ones(2, 2))
        tensor([[4.+0.j, 0.+0.j],
                [0.+0.j, 0.+0.j]])
    """
    return _c2c(input, s, dim, norm, "fftn", inverse=False)


def ifftn(input: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of fftn.

    Examples:
        >>> lm.fft.ifftn(lm.fft.fftn(lm.tensor([[1.0, 2.0]]))).real
        tensor([[1., 2.]])
    """
    return _c2c(input, s, dim, norm, "ifftn", inverse=True)


def rfftn(input: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """fftn of a real input, keeping the last dim's n // 2 + 1 non-negative frequencies.

    Examples:
        >>> lm.fft.rfftn(lm.ones(2, 4)).shape
        lamina.Size([2, 3])
    """
    return _r2c(input, s, dim, norm, "rfftn")


def irfftn(input: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of rfftn: a real signal, its last dim 2 * (m - 1) long unless s says.

    Examples:
        >>> lm.fft.irfftn(lm.fft.rfftn(lm.ones(2, 4))).shape
        lamina.Size([2, 4])
    """
    return _c2r(input, s, dim, norm, "irfftn")


def hfftn(input: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The n-dim FFT of a Hermitian-symmetric signal given by its half: real.

    Examples:
        >>> lm.fft.hfftn(lm.tensor([[1.0, 2j]]))
        tensor([[1., 1.]])
    """
    return _hermitian(input, s, dim, norm, "hfftn")


def ihfftn(input: Any, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of hfftn: the half spectrum of a real signal.

    Examples:
        >>> lm.fft.ihfftn(lm.tensor([[1.0, 1.0]]))
        tensor([[1.-0.j, 0.-0.j]])
    """
    return _inverse_hermitian(input, s, dim, norm, "ihfftn")


def fft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The 1-dim discrete Fourier transform along `dim`, of `n` points (crop or zero-pad).

    Examples:
        >>> lm.fft.fft(lm.tensor([1.0, 0.0, 0.0, 0.0]))
        tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _c2c(input, _one(n), (dim,), norm, "fft", inverse=False)


def ifft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of fft.

    Examples:
        >>> lm.fft.ifft(lm.tensor([4.0, 0.0, 0.0, 0.0]))
        tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    return _c2c(input, _one(n), (dim,), norm, "ifft", inverse=True)


def rfft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """fft of a real input: its n // 2 + 1 non-negative frequencies.

    Examples:
        >>> lm.fft.rfft(lm.tensor([1.0, 1.0, 1.0, 1.0]))
        tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    return _r2c(input, _one(n), (dim,), norm, "rfft")


def irfft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of rfft: a real signal of `n` points (2 * (m - 1) by default).

    Examples:
        >>> lm.fft.irfft(lm.tensor([4.0, 0.0, 0.0]))
        tensor([1., 1., 1., 1.])
    """
    return _c2r(input, _one(n), (dim,), norm, "irfft")


def hfft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The FFT of a Hermitian-symmetric signal given by its first half: real.

    Examples:
        >>> lm.fft.hfft(lm.tensor([1.0, 0.0, 0.0]))
        tensor([1., 1., 1., 1.])
    """
    return _hermitian(input, _one(n), (dim,), norm, "hfft")


def ihfft(input: Any, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:  # noqa: A002
    """The inverse of hfft: the half spectrum of a real signal.

    Examples:
        >>> lm.fft.ihfft(lm.tensor([1.0, 1.0, 1.0, 1.0]))
        tensor([1.-0.j, 0.-0.j, 0.-0.j])
    """
    return _inverse_hermitian(input, _one(n), (dim,), norm, "ihfft")


def fft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """fftn over the last two dims (or `dim`).

    Examples:
        >>> lm.fft.fft2(lm.ones(1, 2)).shape
        lamina.Size([1, 2])
    """
    return _c2c(input, s, dim, norm, "fft2", inverse=False)


def ifft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """ifftn over the last two dims (or `dim`).

    Examples:
        >>> lm.fft.ifft2(lm.ones(1, 2)).shape
        lamina.Size([1, 2])
    """
    return _c2c(input, s, dim, norm, "ifft2", inverse=True)


def rfft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """rfftn over the last two dims (or `dim`).

    Examples:
        >>> lm.fft.rfft2(lm.ones(3, 8)).shape
        lamina.Size([3, 5])
    """
    return _r2c(input, s, dim, norm, "rfft2")


def irfft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """irfftn over the last two dims (or `dim`).

    Examples:
        >>> lm.fft.irfft2(lm.fft.rfft2(lm.ones(3, 8))).shape
        lamina.Size([3, 8])
    """
    return _c2r(input, s, dim, norm, "irfft2")


def hfft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """hfftn over the last two dims (or `dim`).

    Examples:
        >>> lm.fft.hfft2(lm.ones(2, 3)).shape
        lamina.Size([2, 4])
    """
    return _hermitian(input, s, dim, norm, "hfft2")


def ihfft2(input: Any, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:  # noqa: A002
    """ihfftn over the last two dims (or `dim`).

    Examples:
        >>> lm.fft.ihfft2(lm.ones(2, 4)).shape
        lamina.Size([2, 3])
    """
    return _inverse_hermitian(input, s, dim, norm, "ihfft2")


__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
           "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
