"""The fused kernels of a single op split into `parts` shares run at once on numba's
OpenMP pool: each `*_parts` kernel runs its serial kernel on a contiguous range of the
elements or rows per share. Loaded by lamina.fused.shares, only where numba runs.

lamina's own pool (lamina.parallel) hands a share to a sleeping Python thread and waits
on another to learn that it is done: two wake-ups, each as long as a memory pass over a
few hundred thousand elements on a virtual machine, so that a GELU ran no faster on two
threads than on one (benchmarks/RESULTS.md, session 55). OpenMP's threads spin between
regions. And MKL's products run on this same pool, which the ops between them now keep
awake.

Each share's arithmetic is its serial kernel's over its range, fixed by `parts`, not by
the threads that run it; the elementwise kernels give the same bits for any `parts`.
"""

from __future__ import annotations

import numba
import numpy as np

from lamina.fused import numba_conv_pool as conv_pool
from lamina.fused import numba_kernels as serial
from lamina.fused import numba_pool as pool
from lamina.fused import numba_softmax as rows_of
from lamina.fused import numba_windows as windows
from lamina.fused import numba_winograd as winograd
from lamina.fused.numba_cache import jit

# No fastmath here: a share's range is integer arithmetic; the kernels keep their own flags.
split = jit(nogil=True, error_model="numpy", parallel=True)
_inline = jit(nogil=True, error_model="numpy", inline="always")


@_inline
def _bounds(n, parts, p):  # type: ignore[no-untyped-def]
    """Share p of `parts` of n items: [lo, hi), as lamina.parallel.bounds cuts them."""
    return n * p // parts, n * (p + 1) // parts


@split
def gelu_forward_parts(parts, x, y, d):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(x.size, parts, p)
        serial.gelu_forward(x[lo:hi], y[lo:hi], d[lo:hi])


@split
def gelu_backward_parts(parts, d, gy, gx):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(d.size, parts, p)
        serial.gelu_backward(d[lo:hi], gy[lo:hi], gx[lo:hi])


@split
def gelu_values_parts(parts, x, y):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(x.size, parts, p)
        serial.gelu_values(x[lo:hi], y[lo:hi])


@split
def gelu_grad_parts(parts, x, gy, gx):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(x.size, parts, p)
        serial.gelu_grad(x[lo:hi], gy[lo:hi], gx[lo:hi])


@split
def relu_parts(parts, x, y):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(x.size, parts, p)
        serial.relu(x[lo:hi], y[lo:hi])


@split
def relu_backward_parts(parts, gy, kept, gx):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(gy.size, parts, p)
        serial.relu_backward(gy[lo:hi], kept[lo:hi], gx[lo:hi])


@split
def adam_parts(parts, p_, g, m, v, c1, b2, c2, step_size, bias2_root, eps, shrink,  # type: ignore[no-untyped-def]
               l2):
    for p in numba.prange(parts):
        lo, hi = _bounds(p_.size, parts, p)
        serial.adam(p_[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], c1, b2, c2, step_size,
                    bias2_root, eps, shrink, l2)


@split
def sgd_parts(parts, p_, g, buf, lr, wd, momentum, keep, nesterov):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(p_.size, parts, p)
        serial.sgd(p_[lo:hi], g[lo:hi], buf[lo:hi], lr, wd, momentum, keep, nesterov)


@split
def layer_norm_parts(parts, x, w, b, eps, y, mean, invstd):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(x), parts, p)
        serial.layer_norm(x[lo:hi], w, b, eps, y[lo:hi], mean[lo:hi], invstd[lo:hi])


@split
def layer_norm_backward_parts(parts, gy, x, mean, invstd, w, gx, gw, gb):  # type: ignore[no-untyped-def]
    """gw and gb (parts, D): share p writes its rows' sums into row p. Each share sums
    into arrays of its own first: summing into rows of gw and gb, two threads ran slower
    than one."""
    for p in numba.prange(parts):
        lo, hi = _bounds(len(gy), parts, p)
        sw, sb = np.zeros(gy.shape[1]), np.zeros(gy.shape[1])
        serial.layer_norm_backward(gy[lo:hi], x[lo:hi], mean[lo:hi], invstd[lo:hi], w,
                                   gx[lo:hi], sw, sb)
        gw[p], gb[p] = sw, sb


@split
def batch_norm_parts(parts, x, gamma, beta, eps, y, mean, var, invstd):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(x), parts, p)
        serial.batch_norm(x[lo:hi], gamma[lo:hi], beta[lo:hi], eps, y[lo:hi], mean[lo:hi],
                          var[lo:hi], invstd[lo:hi])


@split
def batch_norm_backward_parts(parts, gy, x, mean, invstd, scale, gx, g_xhat, g_sum):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(gy), parts, p)
        serial.batch_norm_backward(gy[lo:hi], x[lo:hi], mean[lo:hi], invstd[lo:hi],
                                   scale[lo:hi], gx[lo:hi], g_xhat[lo:hi], g_sum[lo:hi])


@split
def softmax_rows_parts(parts, x, y, scale, queries, offset):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(x), parts, p)
        rows_of.softmax_rows(x[lo:hi], y[lo:hi], scale, queries, lo, offset)


@split
def softmax_backward_parts(parts, y, gy, scale, gx):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(y), parts, p)
        rows_of.softmax_backward(y[lo:hi], gy[lo:hi], scale, gx[lo:hi])


@split
def log_softmax_rows_parts(parts, x, y):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(x), parts, p)
        rows_of.log_softmax_rows(x[lo:hi], y[lo:hi])


@split
def add_row_parts(parts, y, b):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(y), parts, p)
        serial.add_row(y[lo:hi], b)


@split
def im2col_parts(parts, xc, kh, kw, sh, sw, ph, pw, dh, dw, col):  # type: ignore[no-untyped-def]
    """Channels in shares (xc (C, N, H, W), col (C, KH, KW, N, OH, OW))."""
    for p in numba.prange(parts):
        lo, hi = _bounds(len(xc), parts, p)
        windows.im2col(xc[lo:hi], kh, kw, sh, sw, ph, pw, dh, dw, col[lo:hi])


@split
def col2im_parts(parts, gcol, sh, sw, ph, pw, dh, dw, gx):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(gcol), parts, p)
        windows.col2im(gcol[lo:hi], sh, sw, ph, pw, dh, dw, gx[lo:hi])


@split
def max_pool_2x2_parts(parts, x, y, idx):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(x), parts, p)
        pool.max_pool_2x2(x[lo:hi], y[lo:hi], idx[lo:hi])


@split
def max_pool_2x2_backward_parts(parts, gy, idx, gx):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(gy), parts, p)
        pool.max_pool_2x2_backward(gy[lo:hi], idx[lo:hi], gx[lo:hi])


@split
def max_of_blocks_parts(parts, mem, y, idx):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(mem), parts, p)
        pool.max_of_blocks(mem[lo:hi], y[lo:hi], idx[lo:hi])


@split
def scatter_blocks_parts(parts, gy, idx, gmem):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(len(gy), parts, p)
        pool.scatter_blocks(gy[lo:hi], idx[lo:hi], gmem[lo:hi])


@split
def winograd_input_parts(parts, x, ph, pw, th, tw, channels, r0, r1, v):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(channels, parts, p)
        winograd.winograd_input(x, ph, pw, th, tw, lo, hi, r0, r1, v)


@split
def winograd_output_parts(parts, m, channels, r0, r1, y):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(channels, parts, p)
        winograd.winograd_output(m, lo, hi, r0, r1, y)


@split
def winograd_output_grad_parts(parts, gy, th, tw, channels, r0, r1, dm):  # type: ignore[no-untyped-def]
    for p in numba.prange(parts):
        lo, hi = _bounds(channels, parts, p)
        winograd.winograd_output_grad(gy, th, tw, lo, hi, r0, r1, dm)


@split
def conv_max_pool_parts(parts, xph, w3, bias, kh, kw, dh, dw, ph_n, pw_n, n, y, idx):  # type: ignore[no-untyped-def]
    """Images in shares."""
    for p in numba.prange(parts):
        lo, hi = _bounds(n, parts, p)
        conv_pool.conv_max_pool(xph, w3, bias, kh, kw, dh, dw, ph_n, pw_n, lo, hi, y, idx)


@split
def conv_max_pool_weight_grad_parts(parts, xph, gy, idx, kh, kw, dh, dw, ph_n, pw_n, n,  # type: ignore[no-untyped-def]
                                    gws):
    """gws (parts, O, C, KH*KW): share p's sums, over its images, in gws[p] (see
    layer_norm_backward_parts)."""
    for p in numba.prange(parts):
        lo, hi = _bounds(n, parts, p)
        own = np.zeros(gws.shape[1:])
        conv_pool.conv_max_pool_weight_grad(xph, gy, idx, kh, kw, dh, dw, ph_n, pw_n, lo, hi,
                                            own)
        gws[p] = own


def sums(parts: int, width: int) -> np.ndarray:
    """A share's row of float64 sums each, for layer_norm_backward_parts."""
    return np.empty((parts, width))
