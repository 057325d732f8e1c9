"""The convolution's plan kernel: a choice of im2col layouts and weight-gradient GEMMs, and
an output cropped to what a max pooling reads.

Backward reads what forward kept, as in eager mode: the input where forward made no
window matrix (Winograd's product, lamina.functions.winograd; the "gW-shifted" variant,
which needs none) or where backward makes it again (Conv.kept_window: a wide layer's
larger than its input); else the window matrix."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.conv import Conv
from lamina.fused.mkl_blas import matmul
from lamina.plan.kernels.base import Kernel, kernel_for


@kernel_for(Conv)
class ConvKernel(Kernel, Conv):
    writes_output = True
    # Output rows and columns [0, crop) only: set where the only reader, a max pooling,
    # never reads the last ones (see plan.rewrite.crop_for_pool).
    crop: tuple[int, int] | None = None

    @property
    def variants(self) -> tuple[str, ...]:  # type: ignore[override]
        """At stride 1: im2col over flattened rows or compact windows (see Conv._im2col),
        and the weight gradient with the window matrix on either side of one GEMM, or
        without a window matrix (_shifted_gW). Each is faster on some shapes, notably the
        first layer's few channels. None where the traced step ran Winograd's product,
        whose forward and gradients read no window matrix."""
        if self.stride != (1, 1) or self.winograd:
            return ()
        return tuple(f"{cols}/{gW}" for cols in ("flat", "compact")
                     for gW in ("gW", "gW^T", "gW-shifted"))

    def forward(self, x: Any, W: Any, b: Any = None) -> Any:
        x, W = self.setup(x, W)
        if self.crop is not None:
            (oh, ow), (ch, cw) = self.meta[2], self.crop
            self.meta = (*self.meta[:2], (min(oh, ch), min(ow, cw)))
        col, Wm, mem = self.product(x, W, b, out=self.out_buffer())
        self.keep(x, W, col, Wm)
        return self.nchw(mem)

    def _shifted(self) -> bool:
        return self.stride == (1, 1) and self.variant.endswith("shifted")

    def _flat(self) -> bool:
        if self.variant and self.stride == (1, 1):
            return self.variant.startswith("flat")
        return super()._flat()

    def weight_grad(self, col: Any, gyr: Any, x: Any, gy: Any) -> Any:
        if self._shifted():
            return self._shifted_gW(x, gy)
        if self.variant.endswith("gW^T"):
            return matmul(col, gyr.transpose(0, 2, 1)).transpose(0, 2, 1)
        return super().weight_grad(col, gyr, x, gy)

    def _shifted_gW(self, x: Any, gy: Any) -> Any:
        """The weight gradient without a window matrix, one GEMM per kernel offset.

        Lay out the padded input flat (see Conv._grid) and gy, zero-padded, on the same
        (O, N*plane) grid, so gy's position p reads input position p + i*dh*Wp + j*dw. Then
        the input shifted by that offset is a plain strided view, and dW[:, :, i, j] =
        gy @ view.T. Positions outside the output are zeros in gy, so they add nothing.
        No im2col copy, for GEMMs N*plane/(N*OH*OW) longer.
        """
        n, (o, cg, kh, kw) = self.meta[0][0], self.meta[1]
        (ph, pw), (dh, dw), g = self.padding, self.dilation, self.groups
        _, wp, plane = self._grid()
        xf = self._on_grid(x.transpose(1, 0, 2, 3), (ph, pw),
                           tail=(kh - 1) * dh * wp + (kw - 1) * dw)
        span = n * plane
        gyw = self._on_grid(gy.transpose(1, 0, 2, 3), (0, 0))  # (O, span)
        gW = np.empty((kh, kw, o, cg), gy.dtype)
        og = o // g
        for i in range(kh):
            for j in range(kw):
                at = i * dh * wp + j * dw
                for k in range(g):
                    matmul(gyw[k * og:(k + 1) * og], xf[k * cg:(k + 1) * cg, at:at + span].T,
                           out=gW[i, j, k * og:(k + 1) * og])
        return gW.transpose(2, 3, 0, 1)
