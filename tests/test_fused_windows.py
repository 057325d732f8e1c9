"""lamina.fused's compiled im2col and col2im against NumPy's strided windows, exactly:
every stride, padding (up to past the kernel's reach), dilation and kernel aspect, on
inputs whose rows are shorter or longer than the kernel's span."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import lamina.fused as fused
from lamina.functions.conv_windows import out_size, scatter_windows, windows

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")


def _geometries(count=60):
    rng = np.random.default_rng(45)
    while count:
        k, s, d, p = (tuple(int(v) for v in rng.integers(lo, hi, 2))
                      for lo, hi in ((1, 5), (1, 4), (1, 3), (0, 6)))
        n, c, h, w = (int(v) for v in rng.integers((1, 1, 1, 1), (4, 4, 14, 14)))
        oh, ow = (out_size(a, k[i], s[i], p[i], d[i]) for i, a in enumerate((h, w)))
        if oh >= 1 and ow >= 1:
            count -= 1
            yield (n, c, h, w), k, s, p, d, (oh, ow)


def _reference(x, k, s, p, d, out):
    """The window matrix (C, KH, KW, N, OH, OW) through a padded copy and a strided view."""
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    return np.ascontiguousarray(windows(xp, k, s, d, out).transpose(1, 4, 5, 0, 2, 3))


@pytest.mark.parametrize("case", list(_geometries()), ids=str)
def test_compiled_window_matrix_and_its_adjoint_equal_numpys(case):
    (n, c, h, w), k, s, p, d, out = case
    kernels = fused.compiled() or pytest.skip("numba does not run here")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    col = np.full((c, *k, n, *out), np.nan, np.float32)  # every element must be written
    kernels.im2col(np.ascontiguousarray(x.transpose(1, 0, 2, 3)), *k, *s, *p, *d, col)
    np.testing.assert_array_equal(col, _reference(x, k, s, p, d, out))

    gcol = rng.standard_normal(col.shape).astype(np.float32)
    gx = np.zeros((c, n, h, w), np.float32)
    kernels.col2im(gcol, *s, *p, *d, gx)
    padded = scatter_windows(gcol.transpose(0, 3, 1, 2, 4, 5),
                             (c, n, h + 2 * p[0], w + 2 * p[1]), k, s, d)
    want = padded[:, :, p[0]:p[0] + h, p[1]:p[1] + w]
    np.testing.assert_allclose(gx, want, rtol=1e-6, atol=1e-6)


def _same(h, w, k, p, d):
    """A stride-1 geometry whose output is as wide as its input: what most layers of a
    CNN convolve over."""
    oh, ow = (out_size(a, k[i], 1, p[i], d[i]) for i, a in enumerate((h, w)))
    assert ow == w and oh >= 1
    return (2, 3, h, w), k, (1, 1), p, d, (oh, ow)


@pytest.mark.parametrize("case", [
    _same(4, 4, (3, 3), (1, 1), (1, 1)),    # a ResNet's last maps at batch 1
    _same(7, 9, (3, 3), (1, 1), (1, 1)),
    _same(6, 5, (5, 5), (2, 2), (1, 1)),
    _same(8, 7, (3, 3), (2, 2), (2, 2)),    # dilated
    _same(5, 6, (1, 1), (0, 0), (1, 1)),
    _same(5, 6, (3, 1), (1, 0), (1, 1)),    # the rows' padding only
    _same(1, 3, (3, 3), (1, 1), (1, 1)),    # one row: the kernel's outer rows miss it
    _same(2, 2, (5, 5), (2, 2), (1, 1)),    # wider than the image: offsets with no column
    _same(3, 2, (3, 5), (3, 2), (1, 1)),    # padding past the kernel's reach in height
], ids=str)
def test_same_width_windows_equal_numpys(case):
    test_compiled_window_matrix_and_its_adjoint_equal_numpys(case)
