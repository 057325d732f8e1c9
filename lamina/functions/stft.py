"""The short-time Fourier transform and its inverse (torch.stft, torch.istft), built from
differentiable ops: padding, windows cut with `unfold`, the FFTs of lamina.functions.spectral
and, for the inverse, overlap-add by `fold` divided by the windows' summed squares."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.functions import complex as cx
from lamina.functions.padding import pad
from lamina.functions.spatial import fold
from lamina.functions.spectral import FFT, IRFFT, RFFT


def _window(window: Tensor | None, win_length: int, n_fft: int, dtype: Any) -> Tensor:
    """The window, zero-padded on both sides to n_fft (a rectangle where none is given)."""
    if window is None:
        window = Tensor(np.ones(win_length, dtype))
    if window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"stft: expected a 1-D window of win_length={win_length} "
                           f"elements; got shape {tuple(window.shape)}")
    left = (n_fft - win_length) // 2
    return pad(window, (left, n_fft - win_length - left)) if win_length < n_fft else window


def _lengths(n_fft: int, hop_length: Any, win_length: Any, op: str) -> tuple[int, int]:
    hop = n_fft // 4 if hop_length is None else int(hop_length)
    win = n_fft if win_length is None else int(win_length)
    if n_fft < 1 or hop < 1 or not 0 < win <= n_fft:
        raise RuntimeError(f"{op}: expected 0 < n_fft, 0 < hop_length and 0 < win_length <= "
                           f"n_fft; got n_fft={n_fft}, hop_length={hop}, win_length={win}")
    return hop, win


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None) -> Tensor:
    """PyTorch's stft: the spectra of windowed frames of a signal (L,) or batch (B, L), as
    (B?, n_fft // 2 + 1 frequencies, frames) complex numbers.

    Examples:
        >>> lm.stft(lm.randn(2, 64), 16, window=lm.hann_window(16), return_complex=True).shape
        lamina.Size([2, 9, 17])
    """
    if return_complex is None and not input.is_complex():
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs; pass return_complex=True")
    hop, win = _lengths(n_fft, hop_length, win_length, "stft")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1-D or 2-D input; got {input.ndim}-D")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    if window is None:
        warnings.warn("stft: a window was not provided; a rectangular window is applied, "
                      "which causes spectral leakage (pass window=lamina.hann_window(n_fft))",
                      UserWarning, stacklevel=2)
    if center:
        x = pad(x.unsqueeze(1), (n_fft // 2, n_fft // 2), mode=pad_mode).squeeze(1)
    if x.shape[-1] < n_fft:
        raise RuntimeError(f"stft: the (padded) input of {x.shape[-1]} samples is shorter "
                           f"than n_fft={n_fft}")
    real_dtype = np.empty(0, x.dtype).real.dtype if x.is_complex() else x.dtype
    frames = x.unfold(-1, n_fft, hop) * _window(window, win, n_fft, real_dtype)
    one = not x.is_complex() and not (window is not None and window.is_complex())
    onesided = one if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    if onesided:
        spectrum = RFFT((frames.ndim - 1,), (n_fft,), norm).apply(frames)
    else:
        spectrum = FFT((frames.ndim - 1,), (n_fft,), norm, inverse=False).apply(frames)
    spectrum = spectrum.transpose(-1, -2)
    spectrum = spectrum if input.ndim == 2 else spectrum.squeeze(0)
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated, as in PyTorch; take "
                      "view_as_real of the complex result", UserWarning, stacklevel=2)
        return cx.view_as_real(spectrum)
    return spectrum


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """PyTorch's istft: the signal whose stft `input` is, by overlap-add of the frames'
    inverse FFTs divided by the summed squared windows.

    Examples:
        >>> x, w = lm.randn(64), lm.hann_window(16)
        >>> y = lm.istft(lm.stft(x, 16, window=w, return_complex=True), 16, window=w)
        >>> bool(lm.allclose(y, x, atol=1e-5))
        True
    """
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor")
    hop, win = _lengths(n_fft, hop_length, win_length, "istft")
    if window is None:
        warnings.warn("istft: a window was not provided; a rectangular window is applied "
                      "(pass the window stft used, to invert it losslessly)", UserWarning,
                      stacklevel=2)
    z = input if input.ndim == 3 else input.unsqueeze(0)
    onesided = z.shape[-2] != n_fft if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    spectra = z.transpose(-1, -2)  # (B, frames, frequencies)
    if onesided:
        frames = IRFFT((2,), (n_fft,), norm).apply(spectra)
    else:
        frames = FFT((2,), (n_fft,), norm, inverse=True).apply(spectra)
        frames = frames if return_complex else cx.real(frames)
    real_dtype = np.empty(0, frames.dtype).real.dtype
    w = _window(window, win, n_fft, real_dtype)
    count = frames.shape[1]
    size = n_fft + hop * (count - 1)
    envelope = _overlap_add((w * w).expand(1, count, n_fft), size, n_fft, hop)
    signal = (cx.complex(_overlap_add(cx.real(frames * w), size, n_fft, hop),
                         _overlap_add(cx.imag(frames * w), size, n_fft, hop))
              if frames.is_complex() else _overlap_add(frames * w, size, n_fft, hop))
    start = n_fft // 2 if center else 0
    end = size if length is None and not center else (
        size - n_fft // 2 if length is None else start + length)
    used = envelope.array[0, start:min(end, size)]
    if used.size and np.abs(used).min() < 1e-11:
        raise RuntimeError("istft: the window's overlap-add is zero at some samples "
                           "(NOLA fails); use a window and hop_length whose squares overlap")
    # Cropped before dividing: the envelope may be 0 outside (a Hann window's ends).
    signal = signal[:, start:min(end, size)] / envelope[:, start:min(end, size)]
    if end > size:  # the length asked for is longer than the frames cover: zeros after
        signal = pad(signal, (0, end - size))
    return signal if input.ndim == 3 else signal.squeeze(0)


def _overlap_add(frames: Tensor, size: int, n_fft: int, hop: int) -> Tensor:
    """(B, frames, n_fft) summed into (B, size) signals, frame t starting at t * hop."""
    added = fold(frames.transpose(1, 2), (1, size), (1, n_fft), stride=(1, hop))
    return added.reshape(frames.shape[0], size)
