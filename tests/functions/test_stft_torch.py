"""stft and istft against PyTorch's: windows shorter than n_fft, hops, centring and its
padding modes, normalisation, one- and two-sided spectra, complex signals, a length to
crop or pad to; values and the gradients through both transforms; the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

RNG = np.random.default_rng(5)

CASES = [  # stft's arguments, istft's (None: no inverse), the window's length, complex input
    ({"n_fft": 8}, {"n_fft": 8}, None, False),
    ({"n_fft": 8, "hop_length": 2}, {"n_fft": 8, "hop_length": 2}, 8, False),
    ({"n_fft": 8, "hop_length": 3, "win_length": 6, "normalized": True},
     {"n_fft": 8, "hop_length": 3, "win_length": 6, "normalized": True}, 6, False),
    ({"n_fft": 8, "hop_length": 2, "center": False},
     {"n_fft": 8, "hop_length": 2, "center": False}, None, False),
    ({"n_fft": 8, "hop_length": 2, "onesided": False},
     {"n_fft": 8, "hop_length": 2, "onesided": False}, 8, False),
    ({"n_fft": 8, "hop_length": 2}, {"n_fft": 8, "hop_length": 2, "length": 37}, 8, False),
    ({"n_fft": 8, "hop_length": 2}, {"n_fft": 8, "hop_length": 2, "length": 45}, 8, False),
    ({"n_fft": 8, "hop_length": 2, "pad_mode": "constant"}, None, 8, False),
    ({"n_fft": 8, "hop_length": 2},
     {"n_fft": 8, "hop_length": 2, "onesided": False, "return_complex": True}, 8, True),
    ({"n_fft": 16, "hop_length": 4, "win_length": 12, "pad_mode": "replicate"},
     {"n_fft": 16, "hop_length": 4, "win_length": 12},
     12, False),
]


def _run(lib, a, kwargs, inverse, win):
    x = lib.tensor(a, requires_grad=True)
    window = None if win is None else lib.hann_window(win, dtype=lib.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the rectangular window's, in both
        y = lib.stft(x, window=window, return_complex=True, **kwargs)
        r = None if inverse is None else lib.istft(y, window=window, **inverse)
    w = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
    loss = (y.real * w).sum() + (y.imag * w * 0.3).sum()
    if r is not None:
        loss = loss + ((r.real if r.is_complex() else r) ** 2).sum()
    loss.backward()
    return y.detach().numpy(), None if r is None else r.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("batch", [True, False])
def test_stft_and_istft_are_pytorchs(case, batch) -> None:
    kwargs, inverse, win, complex_ = CASES[case]
    a = RNG.standard_normal((2, 40) if batch else (40,))
    if complex_:
        a = a + 1j * RNG.standard_normal(a.shape)
    (ty, tr, tg), (ly, lr, lg) = (_run(lib, a, kwargs, inverse, win) for lib in (torch, lamina))
    np.testing.assert_allclose(ly, ty, rtol=1e-10, atol=1e-12)
    if tr is not None:
        np.testing.assert_allclose(lr, tr, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lg, tg, rtol=1e-10, atol=1e-12)


def test_istft_inverts_stft() -> None:
    x, w = lamina.randn(3, 100), lamina.hann_window(16)
    y = x.stft(16, hop_length=4, window=w, return_complex=True)
    np.testing.assert_allclose(y.istft(16, hop_length=4, window=w, length=100).numpy(),
                               x.numpy(), atol=1e-5)


def test_a_misused_stft_says_what_it_expects() -> None:
    x = lamina.randn(32)
    with pytest.raises(RuntimeError, match="return_complex parameter be given"):
        lamina.stft(x, 8, window=lamina.hann_window(8))
    with pytest.warns(UserWarning, match="window was not provided"):
        lamina.stft(x, 8, return_complex=True)
    with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
        assert lamina.stft(x, 8, window=lamina.hann_window(8), return_complex=False).shape == (
            5, 17, 2)
    with pytest.raises(RuntimeError, match="win_length"):
        lamina.stft(x, 8, window=lamina.hann_window(8), win_length=9, return_complex=True)
    y = lamina.stft(x, 8, hop_length=2, window=lamina.hann_window(8), center=False,
                    return_complex=True)
    with pytest.raises(RuntimeError, match="NOLA"):
        lamina.istft(y, 8, hop_length=2, window=lamina.hann_window(8), center=False)
    with pytest.raises(RuntimeError, match="complex-valued input"):
        lamina.istft(lamina.ones(5, 3), 8)
    with pytest.warns(UserWarning, match="istft: a window was not provided"):
        lamina.istft(lamina.stft(x, 8, window=lamina.ones(8), return_complex=True), 8)
