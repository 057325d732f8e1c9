"""Which window matrix a stride-1 convolution makes (conv_im2col.WindowMatrix._flat): the
flat runs of the padded rows for 4 to 63 channels, and for one image without gradients
from 64 channels on where the padded rows are at most a quarter wider than the output's;
PyTorch's values either way."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.fused as fused
from lamina.functions.conv import Conv

torch = pytest.importorskip("torch")


def _conv(monkeypatch, n, c, size, padding, grad):
    """(whether the op ran flat, its output, PyTorch's), NumPy's copies (no numba)."""
    monkeypatch.setattr(fused, "compiled_for", lambda *a, **k: None)
    flats = []
    real = Conv._flat
    monkeypatch.setattr(Conv, "_flat", lambda self: flats.append(real(self)) or flats[-1])
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, size, size)).astype(np.float32)
    W = (rng.standard_normal((c, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    lx, lW = lm.tensor(x, requires_grad=grad), lm.tensor(W)
    if grad:
        out = lm.nn.functional.conv2d(lx, lW, padding=padding)
    else:
        with lm.no_grad():
            out = lm.nn.functional.conv2d(lx, lW, padding=padding)
    want = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(W), padding=padding)
    return flats[0], out.detach().numpy(), want.numpy()


@pytest.mark.parametrize("n, c, size, padding, grad, flat", [
    (1, 64, 32, 1, False, True),     # batch-1 inference: 34 padded columns for 32
    (1, 256, 8, 1, False, True),     # 10 for 8: a quarter wider
    (1, 512, 4, 1, False, False),    # 6 for 4: half as wide again
    (2, 64, 32, 1, False, False),    # two images
    (1, 64, 32, 1, True, False),     # gradients wanted
    (1, 32, 16, 1, True, True),      # 4 to 63 channels: flat as before
    (1, 64, 4, 2, False, False),     # padding 2: 8 padded columns for 6
])
def test_flat_windows_where_they_pay_with_pytorchs_values(monkeypatch, n, c, size, padding,
                                                          grad, flat):
    ran_flat, got, want = _conv(monkeypatch, n, c, size, padding, grad)
    assert ran_flat == flat
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
