"""The discrete Fourier transforms behind lamina.fft, on NumPy's pocketfft: complex to
complex (`FFT`), real to its half spectrum (`RFFT`) and back (`IRFFT`), over any axes,
each input cropped or zero-padded to the transform's sizes first.

Each backward is the transform's adjoint, by PyTorch's rule for complex gradients: the
inverse transform under the dual normalisation ("backward" <-> "forward"), the input's
cropping undone, and a real input's gradient the real part.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import state
from lamina.autograd.function import Function

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def fit(a: Any, axes: tuple[int, ...], sizes: tuple[int, ...]) -> Any:
    """a cropped or zero-padded at the end of each axis to its size."""
    if all(a.shape[ax] == n for ax, n in zip(axes, sizes)):
        return a
    index = [slice(None)] * a.ndim
    pads = [(0, 0)] * a.ndim
    for ax, n in zip(axes, sizes):
        index[ax] = slice(0, min(n, a.shape[ax]))
        pads[ax] = (0, max(n - a.shape[ax], 0))
    return np.pad(a[tuple(index)], pads)


class _Transform(Function):
    complex_rule = "own"

    def __init__(self, axes: tuple[int, ...], sizes: tuple[int, ...], norm: str) -> None:
        self.axes, self.sizes, self.norm = axes, sizes, norm

    def in_sizes(self) -> tuple[int, ...]:
        return tuple(self.in_shape[ax] for ax in self.axes)


class FFT(_Transform):
    """fftn (or with `inverse` ifftn) over `axes`, the input fitted to `sizes`."""

    def __init__(self, axes: tuple[int, ...], sizes: tuple[int, ...], norm: str,
                 inverse: bool) -> None:
        super().__init__(axes, sizes, norm)
        self.inverse = inverse

    def forward(self, x: Any) -> Any:
        state.complex_seen = True  # ops now check their operands (complex_rules)
        self.in_shape, self.real_in = x.shape, x.dtype.kind != "c"
        transform = np.fft.ifftn if self.inverse else np.fft.fftn
        return transform(x, s=self.sizes, axes=self.axes, norm=self.norm)

    def backward(self, gy: Any) -> Any:
        adjoint = np.fft.fftn if self.inverse else np.fft.ifftn
        g = fit(adjoint(gy, axes=self.axes, norm=_DUAL[self.norm]), self.axes, self.in_sizes())
        return np.ascontiguousarray(g.real) if self.real_in else g


class RFFT(_Transform):
    """rfftn: a real input's spectrum, the last axis halved (n // 2 + 1 frequencies)."""

    def forward(self, x: Any) -> Any:
        state.complex_seen = True
        self.in_shape = x.shape
        return np.fft.rfftn(x, s=self.sizes, axes=self.axes, norm=self.norm)

    def backward(self, gy: Any) -> Any:
        full = fit(gy, self.axes[-1:], self.sizes[-1:])  # the dropped half: zeros
        g = np.fft.ifftn(full, axes=self.axes, norm=_DUAL[self.norm]).real
        return np.ascontiguousarray(fit(g, self.axes, self.in_sizes()))


class IRFFT(_Transform):
    """irfftn: the real signal of a half spectrum, the last axis `sizes[-1]` long (the
    input's first sizes[-1] // 2 + 1 frequencies; the imaginary parts of the zero and
    Nyquist frequencies are ignored)."""

    def forward(self, z: Any) -> Any:
        self.in_shape, self.real_in = z.shape, z.dtype.kind != "c"
        return np.fft.irfftn(z, s=self.sizes, axes=self.axes, norm=self.norm)

    def backward(self, gy: Any) -> Any:
        g = np.fft.rfftn(gy, axes=self.axes, norm=_DUAL[self.norm])
        # Every frequency but the zero and Nyquist ones stands for itself and its mirror.
        n = self.sizes[-1]
        twice = [slice(None)] * g.ndim
        twice[self.axes[-1]] = slice(1, (n + 1) // 2)
        g[tuple(twice)] *= 2
        g = fit(g, self.axes, self.in_sizes())
        if self.real_in:  # a real half spectrum, taken as complex
            return np.ascontiguousarray(g.real)
        return g.astype(np.result_type(gy.dtype, np.complex64), copy=False)
