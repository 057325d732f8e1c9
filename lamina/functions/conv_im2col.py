"""The window matrix of a convolution (im2col) and its adjoint (col2im), over the
geometry a Conv op records in `meta`: NumPy's strided copies, their flat-row form at
stride 1, or lamina.fused's compiled kernels where the op chose them (`kernels`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import allocator, fused
from lamina.functions.conv_windows import padded, scatter_windows, strided_view, windows


class WindowMatrix:
    """im2col and col2im for Conv (and the plan's convolution kernels), which set `meta`
    ((x shape, W shape, output size)), `stride`, `padding`, `dilation`, `groups` and
    `kernels` (numba's kernels, or None for NumPy's copies)."""

    meta: tuple[tuple[int, ...], tuple[int, ...], tuple[int, int]]
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]
    groups: int
    kernels: Any

    def _flat(self) -> bool:
        """Stride 1: window rows are runs of the padded image's flattened rows (see _im2col).
        Untuned, flat for 4 to 63 input channels per group. Below, the runs' extra columns
        and the padded copy of gy outweigh the cheaper copy; from 64 on, the GEMMs dominate
        and their Wp/OW times wider rows (and the strided sums of col2im) cost more than
        the copy saves, most on the small maps deep networks end with. With lamina.fused's
        compiled im2col and col2im, compact at every size: they beat the flat copy.

        And one image without gradients (batch-1 inference), from 64 channels on too, where
        the padded rows are at most a quarter wider than the output's: that GEMM is bound
        by reading the weights, so its wider rows cost little, and copying whole runs
        saves more than they cost (a ResNet's 64- to 256-channel maps; 512 channels on 4 x
        4, whose padded rows are 1.5x as wide, and batches of 4 or 8 ran slower so:
        benchmarks/RESULTS.md, session 78)."""
        (n, _, _, w), (_, cg, _, _), (_, ow) = self.meta
        if self.stride != (1, 1) or self.kernels is not None or cg < 4:
            return False
        if cg < 64:
            return True
        one_image = n == 1 and not any(getattr(self, "needs_input_grad", (True,)))
        return one_image and 4 * (w + 2 * self.padding[1]) <= 5 * ow

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
            xp = padded(x, ph, pw)
            win = windows(xp, (kh, kw), self.stride, self.dilation, (oh, ow))
            col = allocator.empty((c, kh, kw, n, oh, ow), x.dtype)  # see allocator.empty
            np.copyto(col, win.transpose(1, 4, 5, 0, 2, 3))
            return col.reshape(g, (c // g) * kh * kw, n * oh * ow), ow
        _, wp, plane = self._grid()
        xs = self._on_grid(x.transpose(1, 0, 2, 3), (ph, pw))
        item = xs.itemsize
        runs = strided_view(xs, (c, kh, kw, n, oh * wp),
                            (n * plane * item, dh * wp * item, dw * item, plane * item, item))
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
