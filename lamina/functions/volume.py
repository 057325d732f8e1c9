"""Convolution and pooling over volumes (N, C, D, H, W), and adaptive max pooling; composed
from strided slices of the padded input (one per kernel offset), so their gradients are
the slices' and the products'.

Composed rather than fused: these serve the models that need them, not lamina's hot
paths (1-D and 2-D convolution and pooling have their own kernels).
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import first_max, unbatched
from lamina.functions.array import concat, reshape, stack
from lamina.functions.operands import constant_op
from lamina.functions.padding import pad
from lamina.functions.product import matmul


def per_axis(v: Any, nd: int, name: str) -> tuple[int, ...]:
    """An int, or nd of them, as nd ints (a kernel size, stride, padding or dilation)."""
    values = (int(v),) * nd if np.isscalar(v) else tuple(int(a) for a in v)
    if len(values) != nd:
        raise ValueError(f"{name}: expected an int or {nd} of them; got {v!r}")
    return values


def windows(x: Tensor, kernel: tuple[int, ...], stride: tuple[int, ...],
            dilation: tuple[int, ...]) -> Tensor:
    """Every kernel offset's strided slice of x (N, C, *S), stacked on axis 2:
    (N, C, prod(kernel), *out)."""
    spatial = x.shape[2:]
    out = [(s - d * (k - 1) - 1) // st + 1 for s, k, st, d in zip(spatial, kernel, stride,
                                                                   dilation)]
    if min(out) < 1:
        raise ShapeError(f"kernel {kernel} (dilation {dilation}) is larger than the padded "
                         f"input {tuple(spatial)}")
    slices = []
    for offset in itertools.product(*(range(k) for k in kernel)):
        index = tuple(slice(o * d, o * d + st * (n - 1) + 1, st)
                      for o, d, st, n in zip(offset, dilation, stride, out))
        slices.append(x[(slice(None), slice(None), *index)])
    return stack(slices, 2)


class WindowMax(Function):
    """The maximum over axis 2 of stacked windows (N, C, K, *out), its gradient sent to the
    element PyTorch's pooling picks: the first of tied maxima, or the last NaN."""

    def forward(self, cells: Any) -> Any:
        best, self.pick = window_max(cells)
        self.shape = cells.shape
        return best

    def backward(self, gy: Any) -> Any:
        g = np.zeros(self.shape, gy.dtype)
        np.put_along_axis(g, self.pick[:, :, None].astype(np.intp), gy[:, :, None], axis=2)
        return g


def window_max(cells: Any) -> tuple[Any, Any]:
    """(the maximum over axis 2 of stacked windows (N, C, K, *out), the index in each
    window of the element PyTorch's pooling picks)."""
    best = cells.max(axis=2)
    return best, first_max([cells[:, :, k] for k in range(cells.shape[2])], best)


def _padded(x: Tensor, padding: tuple[int, ...], value: float = 0.0) -> Tensor:
    widths = [w for p in reversed(padding) for w in (p, p)]
    return pad(x, widths, value=value) if any(padding) else x


@unbatched(3)
def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D convolution (cross-correlation), PyTorch's: input (N, C, D, H, W), weight
    (O, C / groups, kd, kh, kw) -> (N, O, D', H', W').

    Examples:
        >>> F.conv3d(lm.zeros(2, 3, 5, 5, 5), lm.zeros(4, 3, 3, 3, 3), padding=1).shape
        lamina.Size([2, 4, 5, 5, 5])
    """
    if input.ndim != 5 or weight.ndim != 5 or input.shape[1] != weight.shape[1] * groups:
        raise ShapeError(f"conv3d: expected input (N, C, D, H, W) and weight (O, C / groups, "
                         f"kd, kh, kw) with groups={groups}; got {tuple(input.shape)} and "
                         f"{tuple(weight.shape)}")
    kernel = weight.shape[2:]
    dilation = per_axis(dilation, 3, "conv3d: dilation")
    stride = per_axis(stride, 3, "conv3d: stride")
    if padding == "same":
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        widths = [w for t in reversed(total) for w in (t // 2, t - t // 2)]
        x = pad(input, widths)
    else:
        x = _padded(input, (0, 0, 0) if padding == "valid" else per_axis(padding, 3, "padding"))
    cols = windows(x, kernel, stride, dilation)  # (N, C, K, *out)
    n, out = cols.shape[0], cols.shape[3:]
    per, outs = input.shape[1] // groups, weight.shape[0] // groups
    parts = []
    for g in range(groups):
        c = reshape(cols[:, g * per:(g + 1) * per], (n, per * math.prod(kernel), -1))
        w = reshape(weight[g * outs:(g + 1) * outs], (outs, -1))
        parts.append(matmul(w, c))
    y = reshape(parts[0] if groups == 1 else concat(parts, 1), (n, weight.shape[0], *out))
    return y if bias is None else y + reshape(bias, (1, -1, 1, 1, 1))


@unbatched(3)
def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False
               ) -> Tensor:
    """Max over (kd, kh, kw) windows of (N, C, D, H, W); padding reads -inf.

    Examples:
        >>> F.max_pool3d(lm.zeros(1, 2, 4, 4, 4), 2).shape
        lamina.Size([1, 2, 2, 2, 2])
    """
    return pool(input, 3, "max", kernel_size, stride, padding, dilation, ceil_mode,
                return_indices=return_indices)


@unbatched(3)
def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """Mean over (kd, kh, kw) windows of (N, C, D, H, W); padding counts as zeros unless
    `count_include_pad` is False.

    Examples:
        >>> F.avg_pool3d(lm.ones(1, 2, 4, 4, 4), 2).shape
        lamina.Size([1, 2, 2, 2, 2])
    """
    return pool(input, 3, "avg", kernel_size, stride, padding, 1, ceil_mode,
                count_include_pad, divisor_override)


def pool(input: Tensor, nd: int, mode: str, kernel_size: Any, stride: Any = None,
         padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
         count_include_pad: bool = True, divisor_override: int | None = None,
         return_indices: bool = False) -> Tensor:
    """Max or average pooling over the last `nd` axes with all of PyTorch's options
    (dilation, ceil_mode, count_include_pad, divisor_override, return_indices: (output,
    flat indices into each input plane), for max_unpool), composed from windows."""
    op = f"{mode}_pool{nd}d"
    if input.ndim not in (nd + 1, nd + 2):
        raise ShapeError(f"{op}: expected a {nd + 1}-D or {nd + 2}-D input; got shape "
                         f"{tuple(input.shape)}")
    if input.ndim == nd + 1:  # unbatched
        out = pool(input.unsqueeze(0), nd, mode, kernel_size, stride, padding, dilation,
                   ceil_mode, count_include_pad, divisor_override, return_indices)
        return tuple(t.squeeze(0) for t in out) if return_indices else out.squeeze(0)
    kernel = per_axis(kernel_size, nd, f"{op}: kernel_size")
    stride = kernel if stride is None or stride == [] else per_axis(stride, nd, f"{op}: stride")
    padding = per_axis(padding, nd, f"{op}: padding")
    dilation = per_axis(dilation, nd, f"{op}: dilation")
    if any(2 * p > k for p, k in zip(padding, kernel)):
        raise ValueError(f"{op}: pad should be at most half of effective kernel size, but got "
                         f"pad={padding} and kernel_size={kernel}")
    sizes = input.shape[2:]
    extra = [_ceil_extra(n, k, s, p, d) if ceil_mode else 0
             for n, k, s, p, d in zip(sizes, kernel, stride, padding, dilation)]
    widths = [w for p, e in zip(reversed(padding), reversed(extra)) for w in (p, p + e)]
    fill = -np.inf if mode == "max" else 0.0
    x = pad(input, widths, value=fill) if any(widths) else input
    cells = windows(x, kernel, stride, dilation)
    if mode == "max":
        y = WindowMax().apply(cells)
        if not return_indices:
            return y
        where = functools.partial(_input_index, sizes=sizes, geometry=(kernel, stride,
                                                                        padding, dilation))
        return y, constant_op(where, cells)
    total = cells.sum(2)
    if divisor_override:
        return total / divisor_override
    # the divisor: the input's cells in each window, with its padding if count_include_pad
    # (never the ceil_mode overhang)
    inside = np.zeros((1, 1, *x.shape[2:]), input.dtype)
    inside[(0, 0, *(slice(0, n + 2 * p) if count_include_pad else slice(p, p + n)
                    for p, n in zip(padding, sizes)))] = 1
    counts = windows(Tensor(inside), kernel, stride, dilation).sum(2).array
    return total / counts


def _input_index(cells: Any, sizes: tuple[int, ...], geometry: tuple[tuple[int, ...], ...]
                 ) -> Any:
    """For return_indices: where in its (N, C) plane of the unpadded input each window's
    maximum lies, as one flat index (PyTorch's). A window whose elements are all -inf
    points at its first element inside the input, as PyTorch's does."""
    kernel, stride, padding, dilation = geometry
    pick = window_max(cells)[1]
    out = pick.shape[2:]
    at = []
    for d, offset in enumerate(np.unravel_index(pick, kernel)):
        start = np.arange(out[d]).reshape([-1 if a == d else 1 for a in range(len(out))])
        at.append(np.clip(start * stride[d] + offset * dilation[d] - padding[d], 0,
                          sizes[d] - 1))
    return np.ravel_multi_index(at, sizes).astype(np.int64, copy=False)


def _ceil_extra(n: int, k: int, s: int, p: int, d: int) -> int:
    """How far past the padding the last window of ceil_mode reaches (PyTorch's rule: a
    window must start inside the input or its left padding)."""
    span = d * (k - 1) + 1
    out = -(-(n + 2 * p - span) // s) + 1
    if (out - 1) * s >= n + p:
        out -= 1
    return max(0, (out - 1) * s + span - (n + 2 * p))


@unbatched(1)
def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False
                        ) -> Tensor:
    """Max over `output_size` bins of the last axis, as PyTorch sizes them (bin i spans
    floor(i L / n) to ceil((i + 1) L / n)).

    Examples:
        >>> F.adaptive_max_pool1d(lm.arange(6.0).reshape(1, 1, 6), 3).tolist()
        [[[1.0, 3.0, 5.0]]]
    """
    return _adaptive_max(input, (output_size,) if np.isscalar(output_size)
                         else tuple(output_size), return_indices, "adaptive_max_pool1d")


@unbatched(2)
def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False
                        ) -> Tensor:
    """Max over an output_size grid of bins of the last two axes (None keeps an axis).

    Examples:
        >>> F.adaptive_max_pool2d(lm.zeros(2, 3, 7, 5), (2, None)).shape
        lamina.Size([2, 3, 2, 5])
    """
    size = (output_size, output_size) if np.isscalar(output_size) else tuple(output_size)
    return _adaptive_max(input, size, return_indices, "adaptive_max_pool2d")


def _adaptive_max(x: Tensor, size: tuple[Any, ...], return_indices: bool, op: str) -> Any:
    """Each bin's maximum, its gradient to PyTorch's element (WindowMax: the first of tied
    maxima, the last NaN; amax would share it among ties); with return_indices, also
    where in its plane of x each maximum lies."""
    nd = len(size)
    spatial = x.shape[-nd:]
    size = tuple(s if o is None else int(o) for o, s in zip(size, spatial))
    bins = [[(i * s // o, -(-(i + 1) * s // o)) for i in range(o)] for o, s in zip(size, spatial)]
    lead = x.shape[:-nd]
    flat = reshape(x, (1, -1, *spatial))  # (1, N*C, *S): WindowMax's (N, C, K) layout
    values, where = [], []
    for cell in itertools.product(*bins):
        block = flat[(slice(None), slice(None), *(slice(a, b) for a, b in cell))]
        elements = reshape(block, (1, block.shape[1], -1))
        values.append(WindowMax().apply(elements))
        if return_indices:
            at = functools.partial(_bin_index, cell=cell, sizes=spatial)
            where.append(constant_op(at, elements))
    y = reshape(stack(values, -1), (*lead, *size))
    return (y, reshape(stack(where, -1), (*lead, *size))) if return_indices else y


def _bin_index(elements: Any, cell: tuple[tuple[int, int], ...], sizes: tuple[int, ...]
               ) -> Any:
    """Where each row's maximum among a bin's elements (1, R, K) lies in its plane."""
    offsets = np.unravel_index(window_max(elements)[1], [b - a for a, b in cell])
    at = [start + offset for (start, _), offset in zip(cell, offsets)]
    return np.ravel_multi_index(at, sizes).astype(np.int64, copy=False)
