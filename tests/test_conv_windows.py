"""The strided window views that convolutions and poolings copy from: every window equals
the slice it stands for, in any memory order of the input, and no view can be written."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

from lamina.functions.conv_windows import out_size, strided_view, windows


def _layouts():
    """One (2, 3, 7, 6) array in C order, Fortran order, channel-major (a convolution's
    output) and as a cropped slice."""
    a = np.arange(2 * 3 * 7 * 6, dtype=np.float32).reshape(2, 3, 7, 6)
    return {"C": a, "F": np.asfortranarray(a),
            "channel-major": np.ascontiguousarray(a.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3),
            "cropped": np.pad(a, ((0, 0), (0, 0), (1, 0), (0, 2)))[:, :, 1:, :6]}


@pytest.mark.parametrize("layout", list(_layouts()))
@pytest.mark.parametrize("k, s, d", [((3, 3), (1, 1), (1, 1)), ((2, 3), (2, 1), (1, 2)),
                                     ((1, 1), (3, 2), (1, 1))])
def test_every_window_is_its_slice(layout, k, s, d) -> None:
    x = _layouts()[layout]
    oh, ow = (out_size(x.shape[2 + i], k[i], s[i], 0, d[i]) for i in range(2))
    win = windows(x, k, s, d, (oh, ow))
    assert win.shape == (*x.shape[:2], oh, ow, *k)
    for i in range(oh):
        for j in range(ow):
            want = x[:, :, i * s[0]:i * s[0] + d[0] * (k[0] - 1) + 1:d[0],
                     j * s[1]:j * s[1] + d[1] * (k[1] - 1) + 1:d[1]]
            np.testing.assert_array_equal(win[:, :, i, j], want)
    assert not win.flags.writeable and np.shares_memory(win, x)
    with pytest.raises(ValueError, match="read-only"):
        win[0, 0, 0, 0, 0, 0] = 1.0


@pytest.mark.parametrize("layout", list(_layouts()))
def test_strided_view_is_as_strideds_view(layout) -> None:
    """From the input's first element, the same elements as NumPy's as_strided gives."""
    x = _layouts()[layout]
    item = x.itemsize
    shape, strides = (3, 2, 4), (item * 7, item * 1, item * 5)
    view = strided_view(x, shape, strides)
    want = as_strided(x, shape, strides).copy()
    np.testing.assert_array_equal(view, want)
    assert view.strides == strides and not view.flags.writeable
    del x
    gc.collect()  # the view holds the memory it reads
    np.testing.assert_array_equal(view, want)
