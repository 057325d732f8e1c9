"""The windows of a convolution or a pooling: their count along an axis, their strided
view, col2im's adjoint scatter, and the checks and hints the convolutions share."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lamina.errors import ShapeError
from lamina.functions._util import pair


def out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    """Output length of a window of k (dilation d) sliding with stride s over size + 2p."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def padded(x: Any, ph: int, pw: int, fill: Any = 0) -> Any:
    """x (N, C, H, W) with ph rows and pw columns of `fill` on each side (x itself where
    both are 0): np.pad's result without np.pad's general machinery, which costs several
    times the copy itself on a batch-1 network's maps."""
    if not (ph or pw):
        return x
    n, c, h, w = x.shape
    out = np.full((n, c, h + 2 * ph, w + 2 * pw), fill, x.dtype)
    out[:, :, ph:ph + h, pw:pw + w] = x
    return out


def windows(xp: Any, k: tuple[int, int], s: tuple[int, int], d: tuple[int, int],
            out: tuple[int, int]) -> Any:
    """A read-only view (N, C, OH, OW, KH, KW) of every window of a padded NCHW array."""
    n, c = xp.shape[:2]
    sn, sc, sh, sw = xp.strides
    return strided_view(xp, (n, c, out[0], out[1], k[0], k[1]),
                        (sn, sc, sh * s[0], sw * s[1], sh * d[0], sw * d[1]))


def strided_view(a: Any, shape: tuple[int, ...], strides: tuple[int, ...]) -> Any:
    """A read-only view of a's memory from its first element, of this shape and these
    strides (in bytes). As NumPy's as_strided, whose Python wrapping costs several times
    the view itself: at batch 1 that is a visible share of a pooling or an im2col.
    Directly on a's buffer where a is contiguous (C or Fortran order: its first element
    starts its memory), else by as_strided."""
    if a.flags.c_contiguous or a.flags.f_contiguous:
        view = np.ndarray(shape, a.dtype, buffer=a, strides=strides)
        view.flags.writeable = False
        return view
    return as_strided(a, shape=shape, strides=strides, writeable=False)


def scatter_windows(gwin: Any, shape: tuple[int, ...], k: tuple[int, int],
                    s: tuple[int, int], d: tuple[int, int]) -> Any:
    """col2im: add window gradients (A, B, KH, KW, OH, OW) into an array of `shape` (A, B,
    H, W): NCHW for pooling, CNHW for convolution.

    Loops over the KH*KW kernel offsets only; each step adds a whole strided plane.
    """
    g = np.zeros(shape, dtype=gwin.dtype)
    oh, ow = gwin.shape[-2:]
    for i in range(k[0]):
        hi = i * d[0]
        for j in range(k[1]):
            wj = j * d[1]
            g[:, :, hi:hi + s[0] * (oh - 1) + 1:s[0], wj:wj + s[1] * (ow - 1) + 1:s[1]] += (
                gwin[:, :, i, j]
            )
    return g


def channel_hint(x: Any, W: Any, nd: int, groups: int) -> str:
    """For samples without a channel axis, fed to a one-channel convolution: the shape
    they need, as a reshape and as a job's `data.shape`."""
    if x.ndim != nd + 1 or W.ndim != nd + 2 or W.shape[1] * groups != 1:
        return ""
    sample = list(x.shape[1:])
    return (f"; if it is a batch of one-channel samples, give them their channel axis: "
            f"{(x.shape[0], 1, *sample)} (in a job, data.shape: {[1, *sample]})")


def unbatched_hint(nd: int) -> Any:
    """unbatched's hint for a convolution: the channel axis a one-channel sample lacks."""
    def hint(x: Any, W: Any, *args: Any, **kwargs: Any) -> str:
        groups = kwargs.get("groups", args[4] if len(args) > 4 else 1)
        return channel_hint(x, W, nd, groups)
    return hint


def geometry(op: str, nd: int, stride: Any, padding: Any, dilation: Any
              ) -> tuple[tuple[int, int], ...]:
    """Stride, padding and dilation as (height, width) pairs, checked; a 1-D op's runs
    over a height of 1 (stride and dilation 1, padding 0 there)."""
    fill, zero = ((1,), (0,)) if nd == 1 else ((), ())
    s = fill + pair(stride, "stride", op, nd)
    p = zero + pair(padding, "padding", op, nd)
    d = fill + pair(dilation, "dilation", op, nd)
    if min(s) < 1 or min(d) < 1 or min(p) < 0:
        raise ValueError(f"{op}: stride and dilation must be >= 1 and padding >= 0")
    return s, p, d


def check_ranks(op: str, nd: int, x: Any, W: Any, hint: str = "") -> None:
    """Raise ShapeError unless x and W have a convolution's ranks (N, C and nd axes)."""
    if x.ndim != nd + 2 or W.ndim != nd + 2:
        raise ShapeError(
            f"{op}: expected input of {nd + 2} dims (N, C, {'L' if nd == 1 else 'H, W'}) and "
            f"weight of {nd + 2} dims; got input {tuple(x.shape)}, weight {tuple(W.shape)}" + hint)
