"""Convolution (1-D and 2-D) through im2col: one strided view, one batched GEMM (or
Winograd's product, lamina.functions.winograd). The window matrix is conv_im2col.py's,
the windows' geometry conv_windows.py's; transposed convolution is in conv_transpose.py.

A 1-D convolution runs as a 2-D one over a height of 1, so both share one kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import allocator, fused
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions import winograd
from lamina.functions._util import row_sums, unbatched
from lamina.functions.conv_im2col import WindowMatrix
from lamina.functions.conv_padding import string_padding
from lamina.functions.conv_windows import (
    channel_hint,
    check_ranks,
    geometry,
    out_size,
    unbatched_hint,
)
from lamina.fused.mkl_blas import matmul


class Conv(WindowMatrix, Function):
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
        self.stride, self.padding, self.dilation = geometry(op, nd, stride, padding, dilation)

    def _check(self, x: Any, W: Any) -> None:
        nd, op, g = self.nd, self.op, self.groups
        check_ranks(op, nd, x, W, channel_hint(x, W, nd, g))
        if g < 1 or W.shape[0] % g or x.shape[1] != W.shape[1] * g:
            raise ShapeError(
                f"{op}: input channels do not fit the weight; expected {W.shape[1] * g} "
                f"channels (weight {tuple(W.shape)}, groups={g}), got input {tuple(x.shape)}"
            )

    def forward(self, x: Any, W: Any, b: Any = None) -> Any:
        x, W = self.setup(x, W)
        col, Wm, mem = self.product(x, W, b)
        self.keep(x, W, col, Wm)
        return self.nchw(mem)

    def keep(self, x: Any, W: Any, col: Any, Wm: Any) -> None:
        """Save what backward reads: the weight for the input's gradient; for the
        weight's, the window matrix, or x without one (Winograd's product, a weight
        gradient that reads x) or where backward makes it again (kept_window)."""
        need = self.needs_input_grad
        col = None if self._shifted() else self.kept_window(col, x, W)
        self.save_for_backward(col if need[1] else None, Wm if need[0] else None,
                               x if need[1] and col is None else None)

    def kept_window(self, col: Any, x: Any, W: Any) -> Any:
        """The window matrix, for backward to keep, or None where backward should make it
        again from x: where it is larger than x (KH*KW/(SH*SW) times: 2.25 at a 3x3
        kernel's stride 2), which the op that made x mostly keeps anyway (a ReLU keeps
        its output), and the layer has 128 output channels a group or more. Making it
        again is one copy, against the three GEMMs that make 3*O/groups multiply-adds an
        element of it: with fewer channels the copy is a larger part of the layer's time
        (a small CNN's 64-channel layer ran its step several percent slower so) for what
        a smaller network's memory does not need (benchmarks/RESULTS.md, session 74)."""
        if col is None or col.nbytes <= x.nbytes or W.shape[0] // self.groups < 128:
            return col
        return None

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
        self.kernels = fused.compiled_for(n * cg * g * kh * kw * oh * ow,
                                          any(self.needs_input_grad))
        col, cols = self._im2col(x)
        # One large GEMM per group, the batch along its long side: (O/g, K) @ (K, N*L). Its
        # result is channel-major (C, N, H, W) memory; y is the NCHW view of it, not a copy.
        # Elementwise ops and pooling keep that layout, and backward reads gy in it for free.
        mem = np.empty((o, n, oh, ow), col.dtype) if out is None else out.reshape(o, n, oh, ow)
        if cols == ow:
            matmul(Wm, col, out=mem.reshape(g, o // g, n * oh * ow))
            if b is not None:
                mem += b.reshape(o, 1, 1, 1)
        else:  # rows computed over the padded width: keep their first ow columns
            wide = matmul(Wm, col).reshape(o, n, oh, cols)[..., :ow]
            if b is None:
                np.copyto(mem, wide)
            else:
                np.add(wide, b.reshape(o, 1, 1, 1), out=mem)
        return col, Wm, mem

    def nchw(self, mem: Any) -> Any:
        """The output, NCHW (NCL for 1-D), as a view of channel-major memory."""
        y = mem.transpose(1, 0, 2, 3)
        return y[:, :, 0, :] if self.nd == 1 else y

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
            if col is None and not self._shifted():
                col = self._im2col(x)[0]  # forward kept x (see kept_window)
            gW = self.weight_grad(col, gyr, x, gy).reshape(W_shape)
            gW = gW[:, :, 0, :] if self.nd == 1 else gW
            col = None  # one made here is freed before gcol, its size, is made
        if need[0]:
            gcol = matmul(Wm.transpose(0, 2, 1), gyr,  # (g, C/g*KH*KW, N*OH*cols)
                         out=allocator.empty((g, Wm.shape[2], gyr.shape[2]), gyr.dtype))
            gx = self._col2im(gcol.reshape(c, kh, kw, n, oh, cols))
            gx = gx[:, :, 0, :] if self.nd == 1 else gx
        if len(need) == 3 and need[2]:
            gb = row_sums(gyr).reshape(o)  # the padded columns of gyr are zeros
        return (gx, gW) if len(need) == 2 else (gx, gW, gb)

    def _shifted(self) -> bool:
        """Whether the weight gradient reads x, not a window matrix (a plan kernel's
        variant: lamina.plan.kernels.conv)."""
        return False

    def weight_grad(self, col: Any, gyr: Any, x: Any, gy: Any) -> Any:
        """The weight gradient (groups, O/g, K) from the window matrix and gy as (groups,
        O/g, N*OH*cols); x (2-D) and gy as given, for a kernel that reads them instead."""
        return matmul(gyr, col.transpose(0, 2, 1))

    def _winograd_grads(self, gy: Any, Wm: Any, x: Any) -> tuple[Any, ...]:
        """The gradients where `product` ran Winograd's: each from its transformed tiles
        (lamina.functions.winograd), no window matrix. The input's first: its transformed
        kernels, (16, C, O), are freed before the weight gradient's, as large, are made,
        beside the input's gradient rather than the weight's (on a small map, such as a
        ResNet's last stage, the larger)."""
        (_, _, h, w), W_shape, _ = self.meta
        gyc = np.ascontiguousarray(gy.transpose(1, 0, 2, 3))  # free if channel-major
        need = self.needs_input_grad
        gx = gW = gb = None
        if need[0]:
            gx = winograd.input_grad(gyc, Wm.reshape(W_shape), self.padding, (h, w))
            gx = gx.transpose(1, 0, 2, 3)
        if need[1]:
            gW = winograd.weight_grad(x.transpose(1, 0, 2, 3), gyc, self.padding)
        if len(need) == 3 and need[2]:
            gb = row_sums(gyc.reshape(len(gyc), -1))
        return (gx, gW) if len(need) == 2 else (gx, gW, gb)

@unbatched(1, unbatched_hint(1))
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


@unbatched(2, unbatched_hint(2))
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
