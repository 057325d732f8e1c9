"""ConvMaxPool computed directly where the convolution has few input channels: no im2col
matrix, no pre-pooling output, the weight's gradient summed from the input's windows
(lamina/fused/numba_conv_pool.py has the why and the kernels). ConvMaxPool's own path
(conv_pool.py) stays for the input's gradient and where numba does not run."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused
from lamina.functions._util import row_sums
from lamina.functions.conv_windows import out_size

# At most this many products a convolution output (C * KH * KW): a network's first layer
# (1 to 3 image channels, 3x3 or 5x5), where im2col's GEMM sums over too few terms to pay
# for the matrix it reads and the output it writes.
MAX_TERMS = 32
# At least this many images: each loop runs over every image's plane at once, and a
# batch-1 plane is too short for the loops to beat im2col's GEMM.
MIN_IMAGES = 8


def direct_applies(conv: Any, x: Any, W: Any, window: tuple[int, int]) -> bool:
    """Whether the direct kernels take conv(x, W) pooled over `window`: one group, stride
    1, float32, few terms per output, and window indices that fit a byte."""
    return (conv.groups == 1 and conv.stride == (1, 1) and len(x) >= MIN_IMAGES
            and W.shape[1] * W.shape[2] * W.shape[3] <= MAX_TERMS
            and window[0] * window[1] < 255 and fused.fits(W) and x.dtype == np.float32)


def _geometry(kernel: Any, x: Any, w_shape: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    """(the padded input split into pooling phases, (C, QH, QW, N, U, V); the kernels' size
    arguments) for x, recording what ConvMaxPool's backward reads (x_shape, w_shape,
    pooled, cells)."""
    n, c, h, w = x.shape
    _, _, kh, kw = w_shape
    conv, (qh, qw) = kernel.conv, kernel.window
    (ph, pw), (dh, dw) = conv.padding, conv.dilation
    pooled = (out_size(h, kh, 1, ph, dh) // qh, out_size(w, kw, 1, pw, dw) // qw)
    kernel.x_shape, kernel.w_shape, kernel.pooled = x.shape, w_shape, pooled
    kernel.cells = n * pooled[0] * pooled[1]
    hp, wp = h + 2 * ph, w + 2 * pw
    u, v = -(-hp // qh), -(-wp // qw)  # rounded up: the phases' planes are equal
    xp = np.zeros((n, c, u * qh, v * qw), np.float32)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    xph = np.ascontiguousarray(xp.reshape(n, c, u, qh, v, qw).transpose(1, 3, 5, 0, 2, 4))
    return xph, (kh, kw, dh, dw, *pooled)


def direct_forward(kernel: Any, x: Any, W: Any, b: Any) -> Any:
    """ConvMaxPool.forward by conv_max_pool, in shares of the images."""
    o = W.shape[0]
    xp, sizes = _geometry(kernel, x, W.shape)
    w3 = np.ascontiguousarray(W).reshape(o, W.shape[1], -1)
    bias = np.zeros(o, np.float32) if b is None else np.ascontiguousarray(b, np.float32)
    out = kernel.out_buffer()
    y = np.empty((o, kernel.cells), np.float32) if out is None else out.reshape(o, kernel.cells)
    idx = np.empty((o, kernel.cells), np.uint8)
    window = kernel.window[0] * kernel.window[1]
    fused.in_ranges(kernel.direct.conv_max_pool, len(x), o * window * kernel.cells // len(x),
                    (xp, w3, bias, *sizes), (y, idx))
    kernel.compiled, kernel.idx = kernel.direct, idx  # what ConvMaxPool.backward reads
    kernel.sizes = sizes
    need = kernel.needs_input_grad
    if any(need):
        # The input's gradient takes ConvMaxPool's own backward, which reads x; without
        # it direct_backward reads the phases made here.
        kept = None if not need[1] else x if need[0] else xp
        kernel.save_for_backward(kept, W if need[0] else None)
    return y.reshape(o, len(x), *kernel.pooled).transpose(1, 0, 2, 3)


def direct_backward(kernel: Any, xp: Any, gy: Any) -> tuple[Any, ...]:
    """ConvMaxPool.backward without the input's gradient, from the forward's phases xp:
    the weight's by conv_max_pool_weight_grad (in shares of the images, each share's
    sums its own), the bias's as row sums."""
    need = kernel.needs_input_grad
    (o, c, kh, kw), n = kernel.w_shape, kernel.x_shape[0]
    gyc = np.ascontiguousarray(gy.transpose(1, 0, 2, 3), np.float32).reshape(o, -1)
    gW = gb = None
    if need[1]:
        module, parts = fused.split_kernels(n, gyc.size // n)
        if module is not None:
            sums = np.empty((parts, o, c, kh * kw))
            module.conv_max_pool_weight_grad_parts(parts, xp, gyc, kernel.idx, *kernel.sizes,
                                                   n, sums)
            gw = sums.sum(axis=0)
        else:
            gw = np.zeros((o, c, kh * kw))
            kernel.direct.conv_max_pool_weight_grad(xp, gyc, kernel.idx, *kernel.sizes, 0, n,
                                                    gw)
        gW = gw.reshape(kernel.w_shape).astype(gy.dtype)
    if len(need) == 3 and need[2]:
        gb = row_sums(gyc)
    return (None, gW) if len(need) == 2 else (None, gW, gb)
