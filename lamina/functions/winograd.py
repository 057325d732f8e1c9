"""3x3 convolutions at stride 1 by Winograd's F(2x2, 3x3): the forward, the input
gradient (the convolution of gy by the kernels turned half a turn) and the weight
gradient (the output transform's adjoint). Where it applies (float32, numba's kernels,
3x3 kernels at stride 1 without dilation or groups, enough channels and tiles), each is
16 GEMMs with 2.25x fewer multiplications than im2col's one, and no window matrix is
made, so a layer's backward keeps its input instead of a matrix 9 times its size. The
transforms are lamina.fused's (numba_winograd); results match im2col's to float32
rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import allocator, fused, parallel, thread_pools
from lamina.fused.mkl_blas import matmul

MIN_CHANNELS = 64
# Tiles times input channels: the size of the transformed input, over 16.
MIN_TILE_CHANNELS = 1 << 16
# The 16 planes of transformed tiles lie a cache line further apart than their size.
# Most maps make planes a power of two long, which put the same row of every plane into
# the same cache sets; the transforms, which write or read all 16 planes a few numbers
# at a time, evicted their own lines (on 4x4 maps, by far the most).
PLANE_GAP = 16
# Blocks of tiles (see _block_rows): this many tiles a block, where the map holds four
# blocks or more. A block's GEMMs read all of the (C, O) planes for its tiles, so it needs
# enough of them to run at BLAS's speed; fewer, larger blocks ran slower with 64
# channels, and maps of fewer blocks (ResNet-18's last two stages at batch 32) ran no
# faster by blocks than whole (benchmarks/RESULTS.md, session 77).
BLOCK_TILES = 256
# The transformed operands of a map's GEMMs where they do not go by blocks (the weight
# gradient always), a chunk of tile rows at a time, each at most this many bytes. Over a
# whole map of 64 channels at batch 32 they were two 33 MB arrays, past malloc's mmap
# threshold, which the allocator's pool then held for the process's life; a chunk's GEMMs
# still sum over thousands of tiles (benchmarks/RESULTS.md).
CHUNK_BYTES = 8 << 20


def applies(stride: tuple[int, int], padding: tuple[int, int], dilation: tuple[int, int],
            groups: int, x: Any, W: Any) -> bool:
    """Whether conv(x, W) runs here: a 3x3 kernel at stride 1, padding at most 2 (its
    input gradient's padding is 2 - padding), float32 arrays and numba's kernels, and
    enough work for the transforms to pay: MIN_CHANNELS in and out (the transforms'
    passes grow with the channels, the multiplications they save with their product: a
    32-channel layer of a small CNN ran slower) and MIN_TILE_CHANNELS tiles times input
    channels: the fewer the channels, the more tiles its slower GEMMs need to beat
    im2col's one (64 channels paid from 1024 tiles, 128 from 512, 256 from 256 and 512
    from 128, forward and backward), and batch-1 inference's maps fall short."""
    if not (W.shape[2:] == (3, 3) and stride == (1, 1) and dilation == (1, 1)
            and groups == 1 and max(padding) <= 2 and min(W.shape[:2]) >= MIN_CHANNELS):
        return False
    n, _, h, w = x.shape
    tiles = n * ((h + 2 * padding[0] - 1) // 2) * ((w + 2 * padding[1] - 1) // 2)
    return (tiles * x.shape[1] >= MIN_TILE_CHANNELS and fused.compiled() is not None
            and fused.fits(x, W, contiguous=False))


# G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]; G g G^T of a 3x3 kernel g,
# read as 9 numbers, is kron(G, G) @ g: 16 numbers, the layout the 16 GEMMs read.
_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
_KRON = np.kron(_G, _G)


def weights(W: Any, flip: bool = False) -> Any:
    """The kernels transformed, (16, O, C), by one GEMM; flipped: the input gradient's,
    (16, C, O), of the kernels turned half a turn (their 9 taps reversed), a transposed
    view."""
    o, c = W.shape[:2]
    kron = _KRON[:, ::-1] if flip else _KRON
    u = _gemms(kron.astype(W.dtype), W.reshape(o * c, 9).T).reshape(16, o, c)
    return u.transpose(0, 2, 1) if flip else u


def convolve(xc: Any, u: Any, padding: tuple[int, int], out: Any) -> Any:
    """out (O, N, OH, OW) = the convolution of xc (C, N, H, W) by the kernels u made by
    `weights`, with zero padding; returns out."""
    kernels, xc = fused.compiled(), np.ascontiguousarray(xc)
    c, (o, n, oh, ow) = xc.shape[0], out.shape
    th, tw = (oh + 1) // 2, (ow + 1) // 2  # tiles of 2x2 outputs, over out's size
    rows = _block_rows(tw, n * th)
    if rows:
        def share(r0: int, r1: int) -> None:  # transform, multiply and transform back
            v_rows, m_rows = _flat(c, rows * tw, xc.dtype), _flat(o, rows * tw, xc.dtype)
            for b0 in range(r0, r1, rows):
                b1 = min(b0 + rows, r1)
                pb = (b1 - b0) * tw
                kernels.winograd_input(xc, *padding, th, tw, 0, c, b0, b1, v_rows)
                _gemms(u, _view(v_rows, c, pb), out=_view(m_rows, o, pb))
                kernels.winograd_output(m_rows, 0, o, b0, b1, out)

        with thread_pools.blas_single_threaded():  # the threads' blocks side by side
            parallel.pieces(n * th, share, unit=16 * (c + o) * tw)
        return out
    # Chunks of tile rows, their transformed input and products made once and reused.
    total = n * th
    rows = _chunk_rows(c, o, tw, out.itemsize, total)
    v_rows, m_rows = _flat(c, rows * tw, out.dtype), _flat(o, rows * tw, out.dtype)
    for r0 in range(0, total, rows):
        r1 = min(r0 + rows, total)
        pb = (r1 - r0) * tw
        v = _tiles(kernels, xc, padding, th, tw, (r0, r1), v_rows)
        _gemms(u, v, out=_view(m_rows, o, pb))
        fused.in_ranges(kernels.winograd_output, o, 16 * pb, (m_rows,), (r0, r1, out))
    return out


def _block_rows(tw: int, total: int) -> int:
    """Rows of tiles a block takes where the forward's GEMMs go block by block (0 where
    they go by chunks of the map): each thread its own blocks, each block's transforms
    and GEMMs on operands still in that core's cache, BLAS held to one thread meanwhile
    so that the threads' GEMMs run side by side rather than each spread over both cores.
    Without that hold (threadpoolctl missing), by chunks: a BLAS threads GEMMs from a
    size of its own, which varies with the CPU's kernels (OpenBLAS's AVX-512 ones kept
    these blocks on one thread, its AVX2 ones spread them), and two threads' blocks,
    each spread over both cores, compete for them. `total`: the map's rows of tiles, tw
    tiles each; see BLOCK_TILES."""
    rows = max(1, BLOCK_TILES // tw)
    return rows if total >= 4 * rows and thread_pools.blas_limitable() else 0


def _gemms(a: Any, b: Any, out: Any = None) -> Any:
    """a @ b without NumPy's invalid-value warning: OpenBLAS's kernels can raise the flag
    on finite operands (see _util.row_sums), and a non-finite input gives non-finite
    outputs, unwarned, as in PyTorch (and Linear)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return matmul(a, b, out=out)


def _flat(rows: int, cols: int, dtype: Any) -> Any:
    """16 planes of rows x cols for the kernels, PLANE_GAP apart: a (16, rows * cols +
    gap) array whose row k holds plane k."""
    return allocator.empty((16, rows * cols + PLANE_GAP), dtype)  # often past the mmap threshold


def _view(flat: Any, rows: int, cols: int) -> Any:
    """The GEMMs' (16, rows, cols) view of the planes in `flat` (see _flat)."""
    return flat[:, : rows * cols].reshape(16, rows, cols)


def _chunk_rows(c: int, o: int, tw: int, itemsize: int, total: int) -> int:
    """Rows of tiles a chunk takes (see CHUNK_BYTES), at most the map's `total`."""
    return min(total, max(1, CHUNK_BYTES // (16 * max(o, c) * tw * itemsize)))


def _tiles(kernels: Any, xc: Any, padding: tuple[int, int], th: int, tw: int,
           rows: tuple[int, int], into: Any) -> Any:
    """(16, C, tiles): B^T d B of xc's tiles (numba_winograd.winograd_input) in the tile
    rows [r0, r1) of `rows`, written into the planes `into` (made by _flat for as many
    tiles or more)."""
    c = xc.shape[0]
    r0, r1 = rows
    fused.in_ranges(kernels.winograd_input, c, 16 * (r1 - r0) * tw, (xc, *padding, th, tw),
                    (r0, r1, into))
    return _view(into, c, (r1 - r0) * tw)


def input_grad(gyc: Any, W: Any, padding: tuple[int, int], hw: tuple[int, int]) -> Any:
    """The input gradient (C, N, H, W), channel-major, of a convolution by W with
    `padding`, from gyc (O, N, OH, OW)."""
    c, n = W.shape[1], gyc.shape[1]
    gx = np.empty((c, n, *hw), gyc.dtype)
    return convolve(gyc, weights(W, flip=True), (2 - padding[0], 2 - padding[1]), gx)


def weight_grad(xc: Any, gyc: Any, padding: tuple[int, int]) -> Any:
    """The weight gradient (O, C, 3, 3) of a convolution of xc (C, N, H, W) with
    `padding`, from gyc (O, N, OH, OW): 16 GEMMs of the output gradient's transformed
    tiles (winograd_output's adjoint) by the input's, then the weight transform's
    adjoint, kron(G, G)^T. In chunks of CHUNK_BYTES (see there), not in blocks: a block's
    GEMMs would each sum over a few tiles into a small (O, C) result, which ran at half
    the speed."""
    kernels, xc, gyc = fused.compiled(), np.ascontiguousarray(xc), np.ascontiguousarray(gyc)
    c, (o, n, oh, ow) = xc.shape[0], gyc.shape
    th, tw = (oh + 1) // 2, (ow + 1) // 2
    total = n * th
    rows = _chunk_rows(c, o, tw, gyc.itemsize, total)
    dm_rows, v_rows = _flat(o, rows * tw, gyc.dtype), _flat(c, rows * tw, gyc.dtype)
    du = part = None
    for r0 in range(0, total, rows):
        r1 = min(r0 + rows, total)
        pb = (r1 - r0) * tw
        fused.in_ranges(kernels.winograd_output_grad, o, 16 * pb, (gyc, th, tw),
                        (r0, r1, dm_rows))
        v = _tiles(kernels, xc, padding, th, tw, (r0, r1), v_rows)
        if du is None:
            du = _gemms(_view(dm_rows, o, pb), v.transpose(0, 2, 1))  # (16, O, C)
        else:
            part = _gemms(_view(dm_rows, o, pb), v.transpose(0, 2, 1), out=part)
            du += part
    del dm_rows, v_rows, v, part  # freed before the result is made, beside du
    return _gemms(du.reshape(16, o * c).T, _KRON.astype(gyc.dtype)).reshape(o, c, 3, 3)
