"""The compiled transforms of Winograd's F(2x2, 3x3) convolution (Lavin and Gray, 2016),
re-exported by numba_kernels: a 3x3 convolution at stride 1 as 16 GEMMs over transformed
4x4 input tiles, with 2.25x fewer multiplications than im2col's one GEMM and no window
matrix. lamina.functions.winograd chooses when to run it and does the GEMMs.

Each 2x2 block of output reads a 4x4 tile d of the padded input, tiles overlapping by
two. With B^T = [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]] and A^T =
[[1, 1, 1, 0], [0, 1, -1, -1]], the block is A^T [(G g G^T) * (B^T d B)] A for a kernel
g: `winograd_input` writes every tile's B^T d B, `winograd_output` applies A^T . A to the
GEMMs' products.

The tiles of a map come in rows of TW; the N*TH rows of all images are numbered
n*TH + ty, and each kernel takes a range of channels (lo, hi) and of those rows (r0, r1):
the whole map split over channels, or a block of rows for all channels, whose GEMMs then
run on operands still in cache (lamina.functions.winograd). The 16 planes of a range
are the rows of a 2-D array (lamina.functions.winograd._flat): channel c's row of tiles
r0..r1 at column c*PB of each, PB = (r1 - r0)*TW tiles.
"""

from __future__ import annotations

import numpy as np

from lamina.fused.numba_math import kernel


@kernel
def winograd_input(x, ph, pw, th, tw, lo, hi, r0, r1, v):  # type: ignore[no-untyped-def]
    """v's planes = B^T d B of the 4x4 tiles d of channels lo:hi and tile rows r0:r1 of x
    (C, N, H, W) padded by (ph, pw) with zeros (and past its end, for an output larger
    than x's), tile (ty, tx) starting at row 2*ty - ph and column 2*tx - pw. Per row of
    tiles, B^T's four row combinations are made over the whole padded width first
    (contiguous loops), then B's column combinations at stride 2, without a branch."""
    h, w = x.shape[2], x.shape[3]
    rows = np.zeros((4, 2 * tw + 2), np.float32)  # padding columns stay zero
    width = min(w, 2 * tw + 2 - pw)  # the input columns any tile reads
    pb = (r1 - r0) * tw
    # Rows as views, chosen once per row of tiles, and the loop over them from 0: an index
    # like pw + q is a signed sum numba wraps, which kept the loop from vectorizing (see
    # numba_windows).
    zeros = np.zeros(w, np.float32)
    b0, b1, b2, b3 = rows[0, pw:], rows[1, pw:], rows[2, pw:], rows[3, pw:]
    for c in range(lo, hi):
        for rt in range(r0, r1):
            n, ty = rt // th, rt % th
            r = 2 * ty - ph
            x0 = x[c, n, r] if 0 <= r < h else zeros
            x1 = x[c, n, r + 1] if 0 <= r + 1 < h else zeros
            x2 = x[c, n, r + 2] if 0 <= r + 2 < h else zeros
            x3 = x[c, n, r + 3] if 0 <= r + 3 < h else zeros
            for q in range(width):
                d0, d1, d2, d3 = x0[q], x1[q], x2[q], x3[q]
                b0[q] = d0 - d2
                b1[q] = d1 + d2
                b2[q] = d2 - d1
                b3[q] = d1 - d3
            base = c * pb + (rt - r0) * tw
            for i in range(4):
                t = rows[i]
                for tx in range(tw):
                    t0, t1 = t[2 * tx], t[2 * tx + 1]
                    t2, t3 = t[2 * tx + 2], t[2 * tx + 3]
                    v[4 * i, base + tx] = t0 - t2
                    v[4 * i + 1, base + tx] = t1 + t2
                    v[4 * i + 2, base + tx] = t2 - t1
                    v[4 * i + 3, base + tx] = t1 - t3


@kernel
def winograd_output(m, lo, hi, r0, r1, y):  # type: ignore[no-untyped-def]
    """y's channels lo:hi (O, N, OH, OW), tile rows r0:r1 = A^T M A of each tile's
    products M (m's planes), tile (ty, tx) giving rows 2*ty, 2*ty + 1 and columns 2*tx,
    2*tx + 1 of y, as far as y reaches. Per row of tiles, A^T's two row combinations over
    contiguous runs of m first, then A's column combinations."""
    oh, ow = y.shape[2], y.shape[3]
    th, tw = (oh + 1) // 2, (ow + 1) // 2
    pb = (r1 - r0) * tw
    rows = np.empty((8, tw), np.float32)
    out = np.empty((2, 2 * tw), np.float32)
    for o in range(lo, hi):
        for rt in range(r0, r1):
            n, ty = rt // th, rt % th
            base = o * pb + (rt - r0) * tw
            for j in range(4):
                for tx in range(tw):
                    m1, m2 = m[4 + j, base + tx], m[8 + j, base + tx]
                    rows[j, tx] = m[j, base + tx] + m1 + m2
                    rows[4 + j, tx] = m1 - m2 - m[12 + j, base + tx]
            for r in range(2):
                for tx in range(tw):
                    t0, t1 = rows[4 * r, tx], rows[4 * r + 1, tx]
                    t2, t3 = rows[4 * r + 2, tx], rows[4 * r + 3, tx]
                    out[r, 2 * tx] = t0 + t1 + t2
                    out[r, 2 * tx + 1] = t1 - t2 - t3
            for r in range(min(2, oh - 2 * ty)):
                for q in range(ow):
                    y[o, n, 2 * ty + r, q] = out[r, q]


@kernel
def winograd_output_grad(gy, th, tw, lo, hi, r0, r1, dm):  # type: ignore[no-untyped-def]
    """dm's planes = A dY A^T of each 2x2 block dY of gy (O, N, OH, OW) in channels lo:hi
    and tile rows r0:r1, zeros past its end: winograd_output's adjoint, for the weight
    gradient. With A = [[1, 0], [1, 1], [1, -1], [0, -1]], a block's rows a and b become
    a, a + b, a - b and -b (made over a whole row of blocks at once), and each of those
    rows' columns (u0, u1) becomes u0, u0 + u1, u0 - u1, -u1."""
    oh, ow = gy.shape[2], gy.shape[3]
    pb = (r1 - r0) * tw
    rows = np.zeros((4, 2 * tw), np.float32)  # the last column stays zero for an odd OW
    for o in range(lo, hi):
        for rt in range(r0, r1):
            n, ty = rt // th, rt % th
            r = 2 * ty
            two = r + 1 < oh
            for q in range(ow):
                a = gy[o, n, r, q]
                b = gy[o, n, r + 1, q] if two else np.float32(0)
                rows[0, q], rows[1, q], rows[2, q], rows[3, q] = a, a + b, a - b, -b
            base = o * pb + (rt - r0) * tw
            for i in range(4):
                t = rows[i]
                for tx in range(tw):
                    u0, u1 = t[2 * tx], t[2 * tx + 1]
                    dm[4 * i, base + tx] = u0
                    dm[4 * i + 1, base + tx] = u0 + u1
                    dm[4 * i + 2, base + tx] = u0 - u1
                    dm[4 * i + 3, base + tx] = -u1
