"""A convolution and the max pooling that reads it, as one kernel: what an execution plan
fuses them into (plan.rewrite.fuse_conv_pool), where pooling windows tile the
convolution's output.

Apart, pooling reads each window's elements from strided planes of the convolution's
output, one element in every `stride` along a row, and writes its gradient back the
same way: NumPy walks rows of a few elements, several times slower than over contiguous
memory. Together, the im2col matrix's columns are put in window-offset order: column
block k holds window element k of every pooling window, so the GEMM writes each of the
planes pooling reads as one contiguous block, and backward writes the gradient's planes
the same way. Output positions no window covers (a last odd row or column) are never
computed. The numbers are eager mode's to float32 rounding: the same GEMM dot products
(OpenBLAS may round one differently in another column block), the bias added before
the maximum, the first maximum's index taken on ties.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lamina import fused
from lamina.autograd.function import Function
from lamina.functions._util import row_sums
from lamina.functions.conv import Conv
from lamina.functions.conv_windows import out_size, padded, windows
from lamina.functions.pooling import MaxPool, first_max, max_of
from lamina.fused.mkl_blas import matmul
from lamina.plan.kernels.base import Kernel
from lamina.plan.kernels.conv_pool_direct import direct_applies, direct_backward, direct_forward


def fusable(conv: Any, pool: Any, weight_shape: tuple[int, ...]) -> bool:
    """Whether conv -> pool can run as ConvMaxPool, and pays: pooling windows that tile
    without padding, and a convolution whose im2col copies compact windows anyway (few
    channels per group, or a stride): with many channels, the window-offset column order
    costs a copy of rows a pooling window wide, more than pooling's strided planes."""
    if not (isinstance(conv, Conv) and isinstance(pool, MaxPool) and conv.nd == pool.nd):
        return False
    if pool.k != pool.s or any(pool.p):
        return False
    return conv.stride != (1, 1) or weight_shape[1] < 4


class ConvMaxPool(Kernel, Function):
    """max_pool(conv(x, W, b)) with non-overlapping, unpadded pooling windows."""

    writes_output = True

    def __init__(self, conv: Conv, pool: MaxPool) -> None:
        # A fresh Conv for the geometry and its checks: the traced one holds arrays.
        self.conv = Conv(conv.nd, 1, 0, 1, conv.groups)
        self.conv.stride, self.conv.padding = conv.stride, conv.padding
        self.conv.dilation = conv.dilation
        self.nd, self.window = conv.nd, pool.k

    def forward(self, x: Any, W: Any, b: Any = None) -> Any:
        self.conv._check(x, W)
        self.direct = None
        if self.nd == 2 and direct_applies(self.conv, x, W, self.window):
            self.direct = fused.compiled_for(x.size * W.shape[0], any(self.needs_input_grad))
            if self.direct is not None:
                return direct_forward(self, x, W, b)
        if self.nd == 1:
            x, W = x[:, :, None, :], W[:, :, None, :]
        o, cg, kh, kw = W.shape
        g = self.conv.groups
        col = self._cols(x, W.shape)
        kk, cells = self.window[0] * self.window[1], self.cells
        mem = matmul(W.reshape(g, o // g, cg * kh * kw), col).reshape(o, kk, cells)
        if b is not None:  # before the maximum, as eager mode adds it: ties stay ties
            mem += b.reshape(o, 1, 1)
        out = self.out_buffer()
        y = np.empty((o, cells), mem.dtype) if out is None else out.reshape(o, cells)
        need = self.needs_input_grad
        self.compiled = (fused.compiled_for(mem.size, any(need))
                         if kk < 256 and fused.fits(mem, y)
                         else None)
        if self.compiled is not None:
            idx = np.empty((o, cells), np.uint8)
            fused.in_rows(self.compiled.max_of_blocks, mem, y, idx)
        else:
            planes = [mem[:, k] for k in range(kk)]
            max_of(planes, y)
            idx = first_max(planes, y) if any(need) else None
        if any(need):
            self.idx = idx
            self.save_for_backward(x if need[1] else None, W if need[0] else None)
        y = y.reshape(o, x.shape[0], *self.pooled).transpose(1, 0, 2, 3)
        return y[:, :, 0, :] if self.nd == 1 else y

    def _cols(self, x: Any, w_shape: tuple[int, ...]) -> Any:
        """im2col (groups, C/groups*KH*KW, window elements*N*PH*PW), columns in window-offset
        order; records the shapes backward needs."""
        n, c, h, w = x.shape
        _, cg, kh, kw = w_shape
        (sh, sw), (ph, pw), (dh, dw), g = (self.conv.stride, self.conv.padding,
                                           self.conv.dilation, self.conv.groups)
        (qh, qw) = self.window
        pooled = (out_size(h, kh, sh, ph, dh) // qh, out_size(w, kw, sw, pw, dw) // qw)
        self.x_shape, self.w_shape, self.pooled = x.shape, w_shape, pooled
        self.cells = n * pooled[0] * pooled[1]
        xp = padded(x, ph, pw)
        win = windows(xp, (kh, kw), (sh, sw), (dh, dw), (pooled[0] * qh, pooled[1] * qw))
        # output row r = PH index * qh + window row: split, then window offsets first
        win = win.reshape(n, c, pooled[0], qh, pooled[1], qw, kh, kw)
        return win.transpose(1, 6, 7, 3, 5, 0, 2, 4).reshape(g, cg * kh * kw,
                                                             qh * qw * self.cells)

    def backward(self, gy: Any) -> tuple[Any, ...]:
        x, W = self.saved_tensors
        need = self.needs_input_grad
        if self.direct is not None and not need[0]:  # a first layer's: no input gradient
            return direct_backward(self, x, gy)  # x: the forward's phases of the input
        if self.nd == 1:
            gy = gy[:, :, None, :]
        o, cg, kh, kw = self.w_shape
        g, kk, cells = self.conv.groups, self.window[0] * self.window[1], self.cells
        gyc = np.ascontiguousarray(gy.transpose(1, 0, 2, 3)).reshape(o, cells)
        gmem = np.empty((o, kk, cells), gy.dtype)
        if self.compiled is not None and fused.fits(gyc):
            fused.in_rows(self.compiled.scatter_blocks, gyc, self.idx, gmem)
        else:
            for k in range(kk):  # each window's gradient goes to its first maximum
                np.multiply(gyc, self.idx == k, out=gmem[:, k])
        gmem = gmem.reshape(g, o // g, kk * cells)
        gx = gW = gb = None
        if need[1]:
            col = self._cols(x, self.w_shape)
            gW = matmul(gmem, col.transpose(0, 2, 1)).reshape(self.w_shape)
            gW = gW[:, :, 0, :] if self.nd == 1 else gW
        if need[0]:
            Wm = W.reshape(g, o // g, cg * kh * kw)
            gcol = matmul(Wm.transpose(0, 2, 1), gmem)
            gx = self._col2im(gcol.reshape(cg * g, kh, kw, *self.window, -1))
            gx = gx[:, :, 0, :] if self.nd == 1 else gx
        if len(need) == 3 and need[2]:
            gb = row_sums(gyc)
        return (gx, gW) if len(need) == 2 else (gx, gW, gb)

    def _col2im(self, gcol: Any) -> Any:
        """Add window gradients (C, KH, KW, QH, QW, N*PH*PW) into gx, channel-major memory:
        per kernel offset, one strided view that covers each input position at most once."""
        n, c, h, w = self.x_shape
        _, _, kh, kw = self.w_shape
        (sh, sw), (ph, pw), (dh, dw) = self.conv.stride, self.conv.padding, self.conv.dilation
        qh, qw = self.window
        gxp = np.zeros((c, n, h + 2 * ph, w + 2 * pw), gcol.dtype)
        sc, sn, sy, sx = gxp.strides
        gcol = gcol.reshape(c, kh, kw, qh, qw, n, *self.pooled)
        for i in range(kh):
            for j in range(kw):
                at = as_strided(gxp[:, :, i * dh:, j * dw:], shape=gcol.shape[:1] + gcol.shape[3:],
                                strides=(sc, sy * sh, sx * sw, sn, sy * sh * qh, sx * sw * qw))
                at += gcol[:, i, j]
        return gxp.transpose(1, 0, 2, 3)[:, :, ph:ph + h, pw:pw + w]

