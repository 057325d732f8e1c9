"""Tensor methods for complex numbers: parts, conjugates, angle and the conjugate
transposes (mH, H, adjoint). On a real tensor each is what PyTorch gives: `conj` the tensor
itself, `real` the tensor, `mH` its transpose."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions import complex as _complex
from lamina.functions.tensor_methods.shared import constant


class ComplexMethods:
    __slots__ = ()

    def is_complex(self) -> bool:
        """Whether the dtype is complex64 or complex128.

        Examples:
            >>> lm.zeros(1).is_complex(), lm.zeros(1, dtype=lm.cfloat).is_complex()
            (False, True)
        """
        return self.array.dtype.kind == "c"

    def isreal(self) -> Any:
        """Where the imaginary part is 0 (everywhere, for a real tensor).

        Examples:
            >>> lm.tensor([1.0, 2.0]).isreal(), lm.tensor([1 + 0j, 1j]).isreal()
            (tensor([True, True]), tensor([ True, False]))
        """
        if self.array.dtype.kind != "c":
            return constant(np.ones(self.shape, bool))
        return constant(self.array.imag == 0)

    @property
    def real(self) -> Any:
        """The real part (a view); the tensor itself where it is real.

        Examples:
            >>> lm.tensor([1.5 - 2j]).real
            tensor([1.5000])
        """
        return _complex.real(self)

    @property
    def imag(self) -> Any:
        """The imaginary part (a view) of a complex tensor.

        Examples:
            >>> lm.tensor([1.5 - 2j]).imag
            tensor([-2.])
        """
        return _complex.imag(self)

    def angle(self) -> Any:
        """atan2(imag, real) of each element, in radians.

        Examples:
            >>> lm.tensor([1j, -1.0]).angle()
            tensor([1.5708, 3.1416])
        """
        return _complex.angle(self)

    def conj(self) -> Any:
        """The complex conjugate; a real tensor is its own.

        Examples:
            >>> lm.tensor([1 + 2j]).conj()
            tensor([1.-2.j])
            >>> x = lm.ones(2); x.conj() is x
            True
        """
        return _complex.conj(self)

    def resolve_conj(self) -> Any:
        """This tensor: lamina makes conjugates in memory, never lazily, so there is no
        conjugate bit to resolve.

        Examples:
            >>> x = lm.tensor([1j]); x.resolve_conj() is x
            True
        """
        return self

    resolve_neg = resolve_conj

    def conj_physical(self) -> Any:
        """The conjugate, made in memory (a copy, for a real tensor too).

        Examples:
            >>> lm.ones(2).conj_physical()
            tensor([1., 1.])
        """
        return self.conj() if self.array.dtype.kind == "c" else self.clone()

    def conj_physical_(self) -> Any:
        """Conjugate in place; a real tensor is its own conjugate.

        Examples:
            >>> x = lm.ones(2); x.conj_physical_() is x
            True
        """
        if self.array.dtype.kind == "c":
            self.copy_(self.conj())
        return self

    def is_conj(self) -> bool:
        """False: lamina makes conjugates in memory, never lazily.

        Examples:
            >>> lm.ones(1).is_conj()
            False
        """
        return False

    is_neg = is_conj

    @property
    def mH(self) -> Any:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of the last two dims.

        Examples:
            >>> lm.zeros(2, 3).mH.shape
            lamina.Size([3, 2])
        """
        return self.conj().mT

    @property
    def H(self) -> Any:  # noqa: N802 - PyTorch's name
        """The conjugate transpose of a matrix.

        Examples:
            >>> lm.tensor([[1j, 2.0]]).H
            tensor([[0.-1.j],
                    [2.-0.j]])
        """
        return self.conj().t()

    def stft(self, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
             window: Any = None, center: bool = True, pad_mode: str = "reflect",
             normalized: bool = False, onesided: bool | None = None,
             return_complex: bool | None = None) -> Any:
        """The short-time Fourier transform: (n_fft // 2 + 1, frames) spectra of windowed
        frames, every hop_length samples (n_fft // 4 by default).

        Examples:
            >>> x = lm.arange(16.0)
            >>> x.stft(8, window=lm.hann_window(8), return_complex=True).shape
            lamina.Size([5, 9])
        """
        from lamina.functions.stft import stft

        return stft(self, n_fft, hop_length, win_length, window, center, pad_mode,
                    normalized, onesided, return_complex)

    def istft(self, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
              window: Any = None, center: bool = True, normalized: bool = False,
              onesided: bool | None = None, length: int | None = None,
              return_complex: bool = False) -> Any:
        """The inverse of stft: the signal, by overlap-add of the frames.

        Examples:
            >>> x, w = lm.arange(16.0), lm.hann_window(8)
            >>> y = x.stft(8, window=w, return_complex=True).istft(8, window=w, length=16)
            >>> bool(lm.allclose(y, x, atol=1e-5))
            True
        """
        from lamina.functions.stft import istft

        return istft(self, n_fft, hop_length, win_length, window, center, normalized,
                     onesided, length, return_complex)

    def adjoint(self) -> Any:
        """mH.

        Examples:
            >>> lm.zeros(1, 2, 3).adjoint().shape
            lamina.Size([1, 3, 2])
        """
        return self.mH
