"""Max and average pooling (1-D and 2-D) with stride and padding, on strided windows
(adaptive average pooling: lamina.functions.adaptive_pool)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina import fused
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions import volume
from lamina.functions._util import (
    axis_order,
    first_max,
    in_order,
    laid_out_like,
    pair,
    unbatched,
)
from lamina.functions.conv_windows import out_size, padded, scatter_windows, windows


class _Pool(Function):
    kind = "pool"

    def __init__(self, nd: int, kernel_size: Any, stride: Any, padding: Any) -> None:
        op = f"{self.kind}{nd}d"
        self.nd, self.op = nd, op
        k = pair(kernel_size, "kernel_size", op, nd)
        s = pair(stride, "stride", op, nd) if stride is not None else k
        p = pair(padding, "padding", op, nd)
        if min(k) < 1 or min(s) < 1 or min(p) < 0:
            raise ValueError(f"{op}: kernel_size and stride must be >= 1 and padding >= 0")
        if any(pi > ki // 2 for pi, ki in zip(p, k)):
            raise ValueError(
                f"{op}: padding must be at most half the kernel size; got padding {p}, kernel {k}"
            )
        lead = (1,) if nd == 1 else ()
        self.k, self.s, self.p = lead + k, lead + s, ((0,) if nd == 1 else ()) + p

    def _pad(self, x: Any, fill: float) -> Any:
        """x as NCHW, padded with `fill`; records the shapes backward needs."""
        if x.ndim != self.nd + 2:
            raise ShapeError(
                f"{self.op}: expected input of {self.nd + 2} dims; got shape {x.shape}"
            )
        if self.nd == 1:
            x = x[:, :, None, :]
        (kh, kw), (sh, sw), (ph, pw) = self.k, self.s, self.p
        oh, ow = out_size(x.shape[2], kh, sh, ph, 1), out_size(x.shape[3], kw, sw, pw, 1)
        if oh < 1 or ow < 1:
            raise ShapeError(
                f"{self.op}: input is smaller than the kernel; got input {x.shape}, kernel {self.k}"
            )
        xp = padded(x, ph, pw, fill)
        self.xp_order = axis_order(xp)  # backward's gradient takes the same layout
        self.xp_shape, self.x_shape, self.out_hw = xp.shape, x.shape, (oh, ow)
        return xp

    def _unpad(self, gxp: Any) -> Any:
        (ph, pw), (h, w) = self.p, self.x_shape[2:]
        gx = gxp[:, :, ph:ph + h, pw:pw + w]
        return gx[:, :, 0, :] if self.nd == 1 else gx

    def _out(self, y: Any) -> Any:
        return y[:, :, 0, :] if self.nd == 1 else y


class MaxPool(_Pool):
    kind = "max_pool"

    def _planes(self, xp: Any) -> list[Any]:
        """One strided view per kernel offset: plane k holds element k of every window."""
        (kh, kw), (sh, sw) = self.k, self.s
        oh, ow = self.out_hw
        return [xp[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
                for i in range(kh) for j in range(kw)]

    def forward(self, x: Any, *, out: Any = None) -> Any:
        """out: an array of the output's size to write the result into."""
        lowest = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        xp = self._pad(x, lowest)
        planes = self._planes(xp)
        # y keeps x's memory order (a convolution's output is channel-major), so no op
        # between them transposes.
        y = np.empty_like(planes[0]) if out is None else laid_out_like(out, planes[0])
        self.idx, self.compiled, stacks = None, None, None
        if self.k == (2, 2) and self.s == (2, 2):
            self.compiled = _compiled_2x2(xp, y, self.needs_input_grad[0])
            idx = np.empty_like(y, np.uint8)
            stacks = _stacks(xp, y, idx) if self.compiled else None
        if stacks is not None:
            x3, y3, i3 = stacks
            fused.in_rows(self.compiled.max_pool_2x2, x3, y3, i3)
            self.idx = idx if self.needs_input_grad[0] else None
        else:
            max_of(planes, y)
            if self.needs_input_grad[0]:  # inference keeps no index (half the work)
                self.idx = first_max(planes, y)
        return self._out(y)

    def backward(self, gy: Any) -> Any:
        if self.nd == 1:
            gy = gy[:, :, None, :]
        if axis_order(gy) != axis_order(self.idx):  # mixed layouts make NumPy crawl
            relaid = np.empty_like(self.idx, dtype=gy.dtype)  # in idx's memory order
            relaid[...] = gy
            gy = relaid
        disjoint = all(s >= k for s, k in zip(self.s, self.k))
        # Windows that tile the input exactly write every element of gx: no zero fill.
        tiled = self.s == self.k and all(
            o * k == n for o, k, n in zip(self.out_hw, self.k, self.xp_shape[2:]))
        gxp = in_order((np.empty if tiled else np.zeros)(math.prod(self.xp_shape), gy.dtype),
                       self.xp_shape, self.xp_order)
        stacks = _stacks(gy, self.idx, gxp) if self.compiled else None
        if stacks is not None:
            g3, i3, gx3 = stacks
            fused.in_rows(self.compiled.max_pool_2x2_backward, g3, i3, gx3, unit=gx3[0].size)
            return self._unpad(gxp)
        for k, plane in enumerate(self._planes(gxp)):
            if disjoint:  # windows do not overlap: each element is written once, no sum
                np.multiply(gy, self.idx == k, out=plane)
            else:
                plane += gy * (self.idx == k)
        return self._unpad(gxp)


def _stacks(*arrays: Any) -> list[Any] | None:
    """Arrays (N, C, H, W) as views (N * C, H, W) over their memory, their outer axes taken
    in the order they are stored in (channel-major after a convolution), the same for
    all; None where one does not store its planes whole, or not in the others' order."""
    order = axis_order(arrays[0])[:2]
    if sorted(order) != [0, 1]:
        return None
    views = []
    for a in arrays:
        t = a.transpose(order + [2, 3])
        if not t.flags.c_contiguous:
            return None
        views.append(t.reshape(-1, *a.shape[2:]))
    return views


def _compiled_2x2(xp: Any, y: Any, backward: bool) -> Any:
    """numba's kernels (lamina.fused) where they run and take float32 xp and y."""
    compiled = fused.compiled_for(xp.size, backward)
    return compiled if compiled is not None and fused.fits(xp, y, contiguous=False) else None


def max_of(planes: list[Any], y: Any) -> Any:
    """The planes' elementwise maximum, written into y (returned)."""
    if len(planes) == 1:
        y[...] = planes[0]
    else:
        np.maximum(planes[0], planes[1], out=y)
    for plane in planes[2:]:
        np.maximum(y, plane, out=y)
    return y


class AvgPool(_Pool):
    kind = "avg_pool"

    def forward(self, x: Any) -> Any:
        # Padding counts in the divisor (PyTorch's default count_include_pad=True).
        win = windows(self._pad(x, 0), self.k, self.s, (1, 1), self.out_hw)
        return self._out(win.mean(axis=(-2, -1), dtype=x.dtype))

    def backward(self, gy: Any) -> Any:
        if self.nd == 1:
            gy = gy[:, :, None, :]
        kh, kw = self.k
        share = gy / gy.dtype.type(kh * kw)
        gwin = np.broadcast_to(share[:, :, None, None], (*gy.shape[:2], kh, kw, *gy.shape[2:]))
        return self._unpad(scatter_windows(gwin, self.xp_shape, self.k, self.s, (1, 1)))


@unbatched(1)
def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Tensor:
    """Max over windows of an (N, C, L) input; padding is -inf, stride defaults to kernel."""
    if dilation != 1 or ceil_mode or return_indices:
        return volume.pool(input, 1, "max", kernel_size, stride, padding, dilation,
                           ceil_mode, return_indices=return_indices)
    return MaxPool(1, kernel_size, stride, padding).apply(input)


@unbatched(2)
def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Tensor:
    """Max over windows of an (N, C, H, W) input; padding is -inf, stride defaults to kernel.

    Examples:
        >>> F.max_pool2d(lm.zeros(8, 16, 28, 28), 2).shape
        lamina.Size([8, 16, 14, 14])
    """
    if dilation not in (1, (1, 1), [1, 1]) or ceil_mode or return_indices:
        return volume.pool(input, 2, "max", kernel_size, stride, padding, dilation,
                           ceil_mode, return_indices=return_indices)
    return MaxPool(2, kernel_size, stride, padding).apply(input)


@unbatched(1)
def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """Mean over sliding windows of an (N, C, L) input; zero padding counts in the mean
    unless `count_include_pad` is False."""
    if ceil_mode or not count_include_pad:
        return volume.pool(input, 1, "avg", kernel_size, stride, padding, 1, ceil_mode,
                           count_include_pad)
    return AvgPool(1, kernel_size, stride, padding).apply(input)


@unbatched(2)
def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over sliding windows of an (N, C, H, W) input; zero padding counts in the mean
    unless `count_include_pad` is False."""
    if ceil_mode or not count_include_pad or divisor_override:
        return volume.pool(input, 2, "avg", kernel_size, stride, padding, 1, ceil_mode,
                           count_include_pad, divisor_override)
    return AvgPool(2, kernel_size, stride, padding).apply(input)
