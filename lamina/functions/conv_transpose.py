"""Transposed convolution (1-D and 2-D): the gradient of a convolution with respect to
its input, as an op of its own (PyTorch's conv_transpose)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import pair, unbatched
from lamina.functions.conv_windows import (
    check_ranks,
    geometry,
    padded,
    scatter_windows,
    windows,
)


class ConvTranspose(Function):
    """N-D transposed convolution for N in (1, 2): the gradient of a convolution with
    respect to its input, as a layer (PyTorch's conv_transpose). Each input pixel scatters
    a kernel-sized patch, weighted by W, into the output; forward is one GEMM and a
    col2im, backward reads one window view of gy for both gradients."""

    def __init__(self, nd: int, stride: Any, padding: Any, output_padding: Any, groups: int,
                 dilation: Any) -> None:
        op = f"conv_transpose{nd}d"
        self.nd, self.op, self.groups = nd, op, int(groups)
        self.stride, self.padding, self.dilation = geometry(op, nd, stride, padding, dilation)
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
        check_ranks(op, nd, x, W)
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
        gyp = padded(gy, ph, pw)
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
