"""The compiled window matrix of a convolution (im2col) and its adjoint (col2im), the
kernels lamina.fused.im2col and col2im split over threads by channel. Re-exported by
numba_kernels, the namespace `lamina.fused.compiled()` returns.

Both walk the window matrix (C, KH, KW, N, OH, OW) in memory order, a row of OW windows
at a time. A row's columns that fall inside the image are one run of the input row (a
strided one past stride 1), found once per kernel column, so the inner loops carry no
bounds test. Their indices are unsigned on purpose: numba wraps a signed index that might
be negative (Python's a[-1]), and that test on every element kept LLVM from vectorizing
the copy, which then ran several times slower (benchmarks/RESULTS.md, session 45).
"""

from __future__ import annotations

import numba

from lamina.fused.numba_math import kernel

U = numba.uint64


@kernel
def _inside(off, s, w, ow):  # type: ignore[no-untyped-def]
    """(q0, q1): the output columns q whose input column q*s + off lies in [0, w)."""
    q0 = min(0 if off >= 0 else (s - 1 - off) // s, ow)
    q1 = (w - 1 - off) // s + 1 if off <= w - 1 else 0
    return q0, min(max(q1, q0), ow)


@kernel
def im2col(xc, kh, kw, sh, sw, ph, pw, dh, dw, col):  # type: ignore[no-untyped-def]
    """col (C, KH, KW, N, OH, OW) = every window of xc (C, N, H, W), zeros where a window
    reaches into the padding: no padded copy. Both C-contiguous."""
    c_, n_, h, w = xc.shape
    oh, ow = col.shape[4], col.shape[5]
    src, dst = xc.reshape(-1), col.reshape(-1)
    row, d = U(ow), U(0)  # d: the start of the window matrix's current row
    for c in range(c_):
        for i in range(kh):
            for j in range(kw):
                off = j * dw - pw
                q0, q1 = _inside(off, sw, w, ow)
                u0, u1, step = U(q0), U(q1), U(sw)
                for n in range(n_):
                    image = (c * n_ + n) * h
                    for y in range(oh):
                        r = y * sh + i * dh - ph
                        if r < 0 or r >= h:
                            for q in range(row):
                                dst[d + q] = 0
                            d += row
                            continue
                        for q in range(u0):
                            dst[d + q] = 0
                        s, out = U((image + r) * w + off + q0 * sw), d + u0
                        if sw == 1:
                            for q in range(u1 - u0):
                                dst[out + q] = src[s + q]
                        else:
                            for q in range(u1 - u0):
                                dst[out + q] = src[s + q * step]
                        for q in range(u1, row):
                            dst[d + q] = 0
                        d += row


@kernel
def col2im(gcol, sh, sw, ph, pw, dh, dw, gx):  # type: ignore[no-untyped-def]
    """gx (C, N, H, W), zeros on entry, += every window gradient of gcol (C, KH, KW, N,
    OH, OW) at its place; what falls on the padding is dropped. Both C-contiguous."""
    c_, kh, kw, n_, oh, ow = gcol.shape
    h, w = gx.shape[2], gx.shape[3]
    src, dst = gcol.reshape(-1), gx.reshape(-1)
    row, d = U(ow), U(0)
    for c in range(c_):
        for i in range(kh):
            for j in range(kw):
                off = j * dw - pw
                q0, q1 = _inside(off, sw, w, ow)
                u0, u1, step = U(q0), U(q1), U(sw)
                for n in range(n_):
                    image = (c * n_ + n) * h
                    for y in range(oh):
                        r = y * sh + i * dh - ph
                        if 0 <= r < h:
                            s, out = U((image + r) * w + off + q0 * sw), d + u0
                            if sw == 1:
                                for q in range(u1 - u0):
                                    dst[s + q] += src[out + q]
                            else:
                                for q in range(u1 - u0):
                                    dst[s + q * step] += src[out + q]
                        d += row
