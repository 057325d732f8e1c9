"""Convolution (1-D and 2-D) through im2col: one strided view, one batched GEMM; and
transposed convolution, its input gradient as an op.

A 1-D convolution runs as a 2-D one over a height of 1, so both share one kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lamina import allocator, fused
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions import winograd
from lamina.functions._util import pair, row_sums, unbatched
from lamina.functions.conv_padding import string_padding


def out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    """Output length of a window of k (dilation d) sliding with stride s over size + 2p."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def windows(xp: Any, k: tuple[int, int], s: tuple[int, int], d: tuple[int, int],
            out: tuple[int, int]) -> Any:
    """A read-only view (N, C, OH, OW, KH, KW) of every window of a padded NCHW array."""
    n, c = xp.shape[:2]
    sn, sc, sh, sw = xp.strides
    return as_strided(
        xp,
        shape=(n, c, out[0], out[1], k[0], k[1]),
        strides=(sn, sc, sh * s[0], sw * s[1], sh * d[0], sw * d[1]),
        writeable=False,
    )


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


def _channel_hint(x: Any, W: Any, nd: int, groups: int) -> str:
    """For samples without a channel axis, fed to a one-channel convolution: the shape
    they need, as a reshape and as a job's `data.shape`."""
    if x.ndim != nd + 1 or W.ndim != nd + 2 or W.shape[1] * groups != 1:
        return ""
    sample = list(x.shape[1:])
    return (f"; if it is a batch of one-channel samples, give them their channel axis: "
            f"{(x.shape[0], 1, *sample)} (in a job, data.shape: {[1, *sample]})")


def _unbatched_hint(nd: int) -> Any:
    """unbatched's hint for a convolution: the channel axis a one-channel sample lacks."""
    def hint(x: Any, W: Any, *args: Any, **kwargs: Any) -> str:
        groups = kwargs.get("groups", args[4] if len(args) > 4 else 1)
        return _channel_hint(x, W, nd, groups)
    return hint


def _geometry(op: str, nd: int, stride: Any, padding: Any, dilation: Any
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


def _check_ranks(op: str, nd: int, x: Any, W: Any, hint: str = "") -> None:
    if x.ndim != nd + 2 or W.ndim != nd + 2:
        raise ShapeError(
            f"{op}: expected input of {nd + 2} dims (N, C, {'L' if nd == 1 else 'H, W'}) and "
            f"weight of {nd + 2} dims; got input {tuple(x.shape)}, weight {tuple(W.shape)}" + hint)


class Conv(Function):
    """N-D convolution for N in (1, 2) with stride, padding, dilation and groups.

    forward is `setup` (checks and shapes), `product` (im2col and one GEMM a group, into
    channel-major memory) and `nchw` (the output's view); backward is `grads`, which makes
    the weight gradient with `weight_grad`. An execution plan's convolution kernel
    reuses these pieces with its own buffers and choices.
    """

    winograd = False  # whether `product` ran Winograd's (set there, read by `grads`)
    kernels: Any = None  # numba's kernels where `product` chose them for im2col and col2im

    def __init__(self, nd: int, stride: Any, padding: Any, dilation: Any, groups: int) -> None:
        op = f"conv{nd}d"
        self.nd, self.op, self.groups = nd, op, int(groups)
        self.stride, self.padding, self.dilation = _geometry(op, nd, stride, padding, dilation)

    def _check(self, x: Any, W: Any) -> None:
        nd, op, g = self.nd, self.op, self.groups
        _check_ranks(op, nd, x, W, _channel_hint(x, W, nd, g))
        if g < 1 or W.shape[0] % g or x.shape[1] != W.shape[1] * g:
            raise ShapeError(
                f"{op}: input channels do not fit the weight; expected {W.shape[1] * g} "
                f"channels (weight {tuple(W.shape)}, groups={g}), got input {tuple(x.shape)}"
            )

    def forward(self, x: Any, W: Any, b: Any = None) -> Any:
        x, W = self.setup(x, W)
        col, Wm, mem = self.product(x, W, b)
        need = self.needs_input_grad
        # Without a window matrix (Winograd's product), backward reads x.
        self.save_for_backward(col if need[1] else None, Wm if need[0] else None,
                               x if need[1] and col is None else None)
        return self.nchw(mem)

    def setup(self, x: Any, W: Any) -> tuple[Any, Any]:
        """Check the shapes; x and W as 2-D convolution's (a 1-D one's over a height of
        1); record (x shape, W shape, output size) as `meta`."""
        self._check(x, W)
        if self.nd == 1:
            x, W = x[:, :, None, :], W[:, :, None, :]
        (_, _, h, w), (_, _, kh, kw) = x.shape, W.shape
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        oh, ow = out_size(h, kh, sh, ph, dh), out_size(w, kw, sw, pw, dw)
        if oh < 1 or ow < 1:
            raise ShapeError(
                f"{self.op}: input is smaller than the (dilated) kernel; got input "
                f"{tuple(x.shape)}, kernel {(kh, kw)}, padding {(ph, pw)}, dilation {(dh, dw)}"
            )
        self.meta = (x.shape, W.shape, (oh, ow))
        return x, W

    def product(self, x: Any, W: Any, b: Any, out: Any = None) -> tuple[Any, Any, Any]:
        """(col, Wm, mem): the window matrix, the weight as (groups, O/g, K), and the output
        as channel-major memory (O, N, OH, OW), written into `out` (an array of that size)
        where given. The output size is meta's. col is None where Winograd's F(2x2, 3x3)
        made the output (lamina.functions.winograd: 3x3 kernels at stride 1)."""
        n, (o, cg, kh, kw), (oh, ow), g = x.shape[0], W.shape, self.meta[2], self.groups
        Wm = W.reshape(g, o // g, cg * kh * kw)
        self.winograd = winograd.applies(self.stride, self.padding, self.dilation, g, x, W)
        if self.winograd:  # no window matrix: backward reads x
            mem = np.empty((o, n, oh, ow), x.dtype) if out is None else out.reshape(o, n, oh, ow)
            winograd.convolve(x.transpose(1, 0, 2, 3), winograd.weights(W), self.padding, mem)
            if b is not None:
                mem += b.reshape(o, 1, 1, 1)
            return None, Wm, mem
        # numba's im2col and col2im for a batch's worth of windows, or once loaded (chosen
        # here, for backward too: the layout of the window matrix follows from it)
        self.kernels = fused.compiled_for(n * cg * g * kh * kw * oh * ow)
        col, cols = self._im2col(x)
        # One large GEMM per group, the batch along its long side: (O/g, K) @ (K, N*L). Its
        # result is channel-major (C, N, H, W) memory; y is the NCHW view of it, not a copy.
        # Elementwise ops and pooling keep that layout, and backward reads gy in it for free.
        mem = np.empty((o, n, oh, ow), col.dtype) if out is None else out.reshape(o, n, oh, ow)
        if cols == ow:
            np.matmul(Wm, col, out=mem.reshape(g, o // g, n * oh * ow))
            if b is not None:
                mem += b.reshape(o, 1, 1, 1)
        else:  # rows computed over the padded width: keep their first ow columns
            wide = np.matmul(Wm, col).reshape(o, n, oh, cols)[..., :ow]
            if b is None:
                np.copyto(mem, wide)
            else:
                np.add(wide, b.reshape(o, 1, 1, 1), out=mem)
        return col, Wm, mem

    def nchw(self, mem: Any) -> Any:
        """The output, NCHW (NCL for 1-D), as a view of channel-major memory."""
        y = mem.transpose(1, 0, 2, 3)
        return y[:, :, 0, :] if self.nd == 1 else y

    def _flat(self) -> bool:
        """Stride 1: window rows are runs of the padded image's flattened rows (see _im2col).
        Untuned, flat for 4 to 63 input channels per group. Below, the runs' extra columns
        and the padded copy of gy outweigh the cheaper copy; from 64 on, the GEMMs dominate
        and their Wp/OW times wider rows (and the strided sums of col2im) cost more than
        the copy saves, most on the small maps deep networks end with. With lamina.fused's
        compiled im2col and col2im, compact at every size: they beat the flat copy."""
        return (self.stride == (1, 1) and 4 <= self.meta[1][1] < 64
                and self.kernels is None)

    def _im2col(self, x: Any) -> tuple[Any, int]:
        """(groups, C/groups*KH*KW, N*OH*cols): every window of the padded input, one copy;
        cols is OW, or the padded width Wp for stride 1.

        At stride 1, window (i, j) of output row r starts at flat offset (r + i*dh)*Wp +
        j*dw of its padded image, and one output row's OW windows plus the Wp - OW beyond
        them are Wp consecutive elements. So a kernel offset reads one run of OH*Wp
        elements per image (one of OW per output row in the general case): a copy several
        times faster, for a GEMM Wp/OW times wider whose extra columns are dropped.
        """
        (n, c, h, w), (_, _, kh, kw), (oh, ow) = self.meta
        (ph, pw), (dh, dw), g = self.padding, self.dilation, self.groups
        if not self._flat():
            compiled = self.kernels
            if compiled is not None and fused.fits(x, contiguous=False):
                col = fused.im2col(compiled, x, (kh, kw), self.stride, self.padding,
                                   self.dilation, (oh, ow))
                return col.reshape(g, (c // g) * kh * kw, n * oh * ow), ow
            xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else x
            win = windows(xp, (kh, kw), self.stride, self.dilation, (oh, ow))
            col = allocator.empty((c, kh, kw, n, oh, ow), x.dtype)  # see allocator.empty
            np.copyto(col, win.transpose(1, 4, 5, 0, 2, 3))
            return col.reshape(g, (c // g) * kh * kw, n * oh * ow), ow
        _, wp, plane = self._grid()
        xs = self._on_grid(x.transpose(1, 0, 2, 3), (ph, pw))
        item = xs.itemsize
        runs = as_strided(xs, shape=(c, kh, kw, n, oh * wp),
                          strides=(n * plane * item, dh * wp * item, dw * item, plane * item,
                                   item), writeable=False)
        col = allocator.empty((c, kh, kw, n, oh * wp), x.dtype)
        np.copyto(col, runs)
        return col.reshape(g, (c // g) * kh * kw, n * oh * wp), wp

    def _grid(self) -> tuple[int, int, int]:
        """The padded input's height Hp and width Wp, and the plane each image takes with
        its padded rows laid flat: Hp*Wp + (KW-1)*dw, since the last row's run of Wp
        overshoots by (KW-1)*dw."""
        (_, _, h, w), (_, _, _, kw), _ = self.meta
        (ph, pw), (_, dw) = self.padding, self.dilation
        hp, wp = h + 2 * ph, w + 2 * pw
        return hp, wp, hp * wp + (kw - 1) * dw

    def _on_grid(self, a: Any, at: tuple[int, int], tail: int = 0) -> Any:
        """a (A, N, rows, cols), channel-major, written into zeros laid out as the flat
        padded images (see _grid) with its first element at row and column `at`:
        (A, N*plane + tail) elements."""
        hp, wp, plane = self._grid()
        lead, n, rows, cols = a.shape
        flat = np.zeros((lead, n * plane + tail), a.dtype)
        images = flat[:, :n * plane].reshape(lead, n, plane)[:, :, :hp * wp]
        images.reshape(lead, n, hp, wp)[:, :, at[0]:at[0] + rows, at[1]:at[1] + cols] = a
        return flat

    def backward(self, gy: Any) -> tuple[Any, ...]:
        return self.grads(gy, *self.saved_tensors)

    def grads(self, gy: Any, col: Any, Wm: Any, x: Any = None) -> tuple[Any, ...]:
        """The gradients from gy, the window matrix and the weight as `product` made them;
        x (the 2-D input) for a `weight_grad` that reads it."""
        if self.winograd:
            return self._winograd_grads(gy, Wm, x)
        (n, c, h, w), W_shape, (oh, ow) = self.meta
        if self.nd == 1:
            gy = gy[:, :, None, :]
        o, cg, kh, kw = W_shape
        g = self.groups
        cols = w + 2 * self.padding[1] if self._flat() else ow
        # gy as (O, N, OH, cols): the layout of the GEMMs below; free when gy is already
        # channel-major, as a convolution's output and what flows back to it are.
        if cols == ow:
            gyr = np.ascontiguousarray(gy.transpose(1, 0, 2, 3))
        else:
            gyr = np.empty((o, n, oh, cols), gy.dtype)
            gyr[..., ow:] = 0
            gyr[..., :ow] = gy.transpose(1, 0, 2, 3)
        gyr = gyr.reshape(g, o // g, n * oh * cols)
        need = self.needs_input_grad
        gx = gW = gb = None
        if need[1]:
            gW = self.weight_grad(col, gyr, x, gy).reshape(W_shape)
            gW = gW[:, :, 0, :] if self.nd == 1 else gW
        if need[0]:
            gcol = np.matmul(Wm.transpose(0, 2, 1), gyr,  # (g, C/g*KH*KW, N*OH*cols)
                             out=allocator.empty((g, Wm.shape[2], gyr.shape[2]), gyr.dtype))
            gx = self._col2im(gcol.reshape(c, kh, kw, n, oh, cols))
            gx = gx[:, :, 0, :] if self.nd == 1 else gx
        if len(need) == 3 and need[2]:
            gb = row_sums(gyr).reshape(o)  # the padded columns of gyr are zeros
        return (gx, gW) if len(need) == 2 else (gx, gW, gb)

    def weight_grad(self, col: Any, gyr: Any, x: Any, gy: Any) -> Any:
        """The weight gradient (groups, O/g, K) from the window matrix and gy as (groups,
        O/g, N*OH*cols); x (2-D) and gy as given, for a kernel that reads them instead."""
        return np.matmul(gyr, col.transpose(0, 2, 1))

    def _winograd_grads(self, gy: Any, Wm: Any, x: Any) -> tuple[Any, ...]:
        """The gradients where `product` ran Winograd's: each from its transformed tiles
        (lamina.functions.winograd), no window matrix."""
        (_, _, h, w), W_shape, _ = self.meta
        gyc = np.ascontiguousarray(gy.transpose(1, 0, 2, 3))  # free if channel-major
        need = self.needs_input_grad
        gx = gW = gb = None
        if need[1]:
            gW = winograd.weight_grad(x.transpose(1, 0, 2, 3), gyc, self.padding)
        if need[0]:
            gx = winograd.input_grad(gyc, Wm.reshape(W_shape), self.padding, (h, w))
            gx = gx.transpose(1, 0, 2, 3)
        if len(need) == 3 and need[2]:
            gb = row_sums(gyc.reshape(len(gyc), -1))
        return (gx, gW) if len(need) == 2 else (gx, gW, gb)

    def _col2im(self, gcol: Any) -> Any:
        """Sum window gradients (C, KH, KW, N, OH, cols) into gx, channel-major memory."""
        (n, c, h, w), (_, _, kh, kw), (oh, ow) = self.meta
        (ph, pw), (dh, dw) = self.padding, self.dilation
        hp, wp, plane = self._grid()
        if not self._flat():
            compiled = self.kernels
            if compiled is not None and fused.fits(gcol):
                gx = fused.col2im(compiled, gcol, (h, w), self.stride, self.padding,
                                  self.dilation)
                return gx.transpose(1, 0, 2, 3)
            # Into a channel-major (C, N, H, W) buffer, where each of the KH*KW additions
            # runs over contiguous blocks; gx is its transposed view.
            gwin = gcol.transpose(0, 3, 1, 2, 4, 5)
            gxp = scatter_windows(gwin, (c, n, hp, wp), (kh, kw), self.stride, self.dilation)
        else:  # the runs _im2col read, added back; the dropped columns carry zeros
            flat = np.zeros((c, n, plane), gcol.dtype)
            runs = gcol.reshape(c, kh, kw, n, oh * wp)
            for i in range(kh):
                for j in range(kw):
                    start = i * dh * wp + j * dw
                    flat[:, :, start:start + oh * wp] += runs[:, i, j]
            gxp = flat[:, :, :hp * wp].reshape(c, n, hp, wp)
        return gxp.transpose(1, 0, 2, 3)[:, :, ph:ph + h, pw:pw + w]


class ConvTranspose(Function):
    """N-D transposed convolution for N in (1, 2): the gradient of a convolution with
    respect to its input, as a layer (PyTorch's conv_transpose). Each input pixel scatters
    a kernel-sized patch, weighted by W, into the output; forward is one GEMM and a
    col2im, backward reads one window view of gy for both gradients."""

    def __init__(self, nd: int, stride: Any, padding: Any, output_padding: Any, groups: int,
                 dilation: Any) -> None:
        op = f"conv_transpose{nd}d"
        self.nd, self.op, self.groups = nd, op, int(groups)
        self.stride, self.padding, self.dilation = _geometry(op, nd, stride, padding, dilation)
        self.output_padding = ((0,) if nd == 1 else ()) + pair(output_padding,
                                                                "output_padding", op, nd)
        if min(self.output_padding) < 0:
            raise ValueError(f"{op}: output_padding must be >= 0")
        if any(q >= max(s, d) for q, s, d in zip(self.output_padding, self.stride,
                                                 self.dilation)):
            raise ValueError(f"{op}: output_padding must be smaller than stride or dilation; "
                             f"got output_padding {self.output_padding[-nd:]}, stride "
                             f"{self.stride[-nd:]}, dilation {self.dilation[-nd:]}")

    def _check(self, x: Any, W: Any) -> None:
        nd, op, g = self.nd, self.op, self.groups
        _check_ranks(op, nd, x, W)
        if g < 1 or W.shape[0] % g or x.shape[1] != W.shape[0]:
            raise ShapeError(f"{op}: input channels do not fit the weight; expected "
                             f"{W.shape[0]} channels (weight {tuple(W.shape)}: in, out / groups, "
                             f"kernel), got input {tuple(x.shape)}")

    def forward(self, x: Any, W: Any, b: Any = None) -> Any:
        self._check(x, W)
        if self.nd == 1:
            x, W = x[:, :, None, :], W[:, :, None, :]
        (n, c, h, w), (_, og, kh, kw), g = x.shape, W.shape, self.groups
        s, d, p, q = self.stride, self.dilation, self.padding, self.output_padding
        # The uncropped output: every patch whole, plus output_padding rows and columns.
        full = [(n_in - 1) * si + di * (k - 1) + 1 + qi
                for n_in, si, di, k, qi in zip((h, w), s, d, (kh, kw), q)]
        out = [f - 2 * pi for f, pi in zip(full, p)]
        if min(out) < 1:
            raise ShapeError(f"{self.op}: padding {p[-self.nd:]} crops away the whole output "
                             f"of input {x.shape} and kernel {(kh, kw)[-self.nd:]}")
        xg = x.transpose(1, 0, 2, 3).reshape(g, c // g, n * h * w)
        Wg = W.reshape(g, c // g, og * kh * kw)
        cols = np.matmul(Wg.transpose(0, 2, 1), xg)  # (g, O/g*KH*KW, N*H*W)
        patches = cols.reshape(g * og, kh, kw, n, h, w).transpose(0, 3, 1, 2, 4, 5)
        y = scatter_windows(patches, (g * og, n, *full), (kh, kw), s, d)
        y = y[:, :, p[0]:p[0] + out[0], p[1]:p[1] + out[1]]
        if b is not None:
            y += b.reshape(-1, 1, 1, 1)
        need = self.needs_input_grad
        self.save_for_backward(x if need[1] else None, W if need[0] else None)
        self.meta = (x.shape, W.shape)
        y = y.transpose(1, 0, 2, 3)  # NCHW view of channel-major memory, as conv's output
        return y[:, :, 0, :] if self.nd == 1 else y

    def backward(self, gy: Any) -> tuple[Any, ...]:
        x, W = self.saved_tensors
        (n, c, h, w), (_, og, kh, kw) = self.meta
        g, need = self.groups, self.needs_input_grad
        if self.nd == 1:
            gy = gy[:, :, None, :]
        (ph, pw) = self.padding
        gyp = np.pad(gy, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else gy
        # Input pixel (h, w) wrote window (h, w) of the padded output: gx and gW read it.
        win = windows(gyp, (kh, kw), self.stride, self.dilation, (h, w))
        # One copy of those windows as a matrix (g, O/g*KH*KW, N*H*W), then a GEMM each.
        col = win.reshape(n, g, og, h, w, kh, kw).transpose(1, 2, 5, 6, 0, 3, 4)
        col = col.reshape(g, og * kh * kw, n * h * w)
        gx = gW = gb = None
        if need[0]:
            gx = np.matmul(W.reshape(g, c // g, og * kh * kw), col).reshape(c, n, h, w)
            gx = gx.transpose(1, 0, 2, 3)  # channel-major memory, as conv's gradients
            gx = gx[:, :, 0, :] if self.nd == 1 else gx
        if need[1]:
            xg = x.transpose(1, 0, 2, 3).reshape(g, c // g, n * h * w)
            gW = np.matmul(xg, col.transpose(0, 2, 1)).reshape(c, og, kh, kw)
            gW = gW[:, :, 0, :] if self.nd == 1 else gW
        if len(need) == 3 and need[2]:
            gb = gy.sum(axis=(0, 2, 3))
        return (gx, gW) if len(need) == 2 else (gx, gW, gb)


@unbatched(1)
def conv_transpose1d(x: Tensor, W: Tensor, b: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Tensor:
    """1-D transposed convolution over NCL input, as PyTorch's (argument order included).

    Args:
        x: input of shape (N, C_in, L).
        W: weight of shape (C_in, C_out / groups, K).
        b: optional bias of shape (C_out,).
        stride, padding, output_padding, dilation: ints; padding crops the output at both
            ends, output_padding adds to its end (smaller than stride or dilation).
        groups: split channels into this many independent convolutions.

    Returns:
        (N, C_out, L_out), L_out = (L - 1) * stride - 2 * padding + dilation * (K - 1)
        + output_padding + 1: the input length of the conv1d it transposes.
    """
    args = (x, W) if b is None else (x, W, b)
    return ConvTranspose(1, stride, padding, output_padding, groups, dilation).apply(*args)


@unbatched(2)
def conv_transpose2d(x: Tensor, W: Tensor, b: Tensor | None = None, stride: Any = 1,
                     padding: Any = 0, output_padding: Any = 0, groups: int = 1,
                     dilation: Any = 1) -> Tensor:
    """2-D transposed convolution over NCHW input, as PyTorch's (argument order included):
    upsampling with a learned kernel, as in a decoder or a GAN's generator.

    Args:
        x: input of shape (N, C_in, H, W).
        W: weight of shape (C_in, C_out / groups, KH, KW).
        b: optional bias of shape (C_out,).
        stride, padding, output_padding, dilation: an int or a pair (height, width).
        groups: split channels into this many independent convolutions.

    Returns:
        (N, C_out, H_out, W_out), H_out = (H - 1) * stride - 2 * padding
        + dilation * (KH - 1) + output_padding + 1.

    Examples:
        >>> y = F.conv_transpose2d(x, W, stride=2)  # x (8, 16, 7, 7), W (16, 8, 2, 2)
        >>> y.shape
        (8, 8, 14, 14)
    """
    args = (x, W) if b is None else (x, W, b)
    return ConvTranspose(2, stride, padding, output_padding, groups, dilation).apply(*args)


@unbatched(1, _unbatched_hint(1))
def conv1d(x: Tensor, W: Tensor, b: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D convolution (cross-correlation, as in PyTorch) over NCL input.

    Args:
        x: input of shape (N, C_in, L).
        W: weight of shape (C_out, C_in / groups, K).
        b: optional bias of shape (C_out,).
        stride, padding, dilation: ints; padding is zeros on both ends.
        groups: split channels into this many independent convolutions.

    Returns:
        A tensor of shape (N, C_out, L_out), L_out = (L + 2p - d(K-1) - 1) // s + 1.

    Raises:
        ShapeError: the channels do not fit the weight, or the input is smaller than the kernel.
    """
    if isinstance(padding, str):
        x, padding = string_padding(x, padding, W.shape[2:], stride, dilation, "conv1d")
    args = (x, W) if b is None else (x, W, b)
    return Conv(1, stride, padding, dilation, groups).apply(*args)


@unbatched(2, _unbatched_hint(2))
def conv2d(x: Tensor, W: Tensor, b: Tensor | None = None, stride: Any = 1, padding: Any = 0,
           dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as in PyTorch) over NCHW input.

    Args:
        x: input of shape (N, C_in, H, W).
        W: weight of shape (C_out, C_in / groups, KH, KW).
        b: optional bias of shape (C_out,).
        stride, padding, dilation: an int or a pair (height, width).
        groups: split channels into this many independent convolutions.

    Returns:
        A tensor of shape (N, C_out, H_out, W_out).

    Raises:
        ShapeError: the channels do not fit the weight, or the input is smaller than the kernel.

    Examples:
        >>> y = F.conv2d(x, W, b, padding=1)  # x (8, 3, 32, 32), W (16, 3, 3, 3): (8, 16, 32, 32)
    """
    if isinstance(padding, str):
        x, padding = string_padding(x, padding, W.shape[2:], stride, dilation, "conv2d")
    args = (x, W) if b is None else (x, W, b)
    return Conv(2, stride, padding, dilation, groups).apply(*args)
