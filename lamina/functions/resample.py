"""Resampling to another spatial size: nearest, (bi/tri)linear, bicubic and area
interpolation, as PyTorch's `interpolate` computes them.

Each spatial axis is a product with an (out, in) interpolation matrix (one 1 per row for
nearest, two weights for linear, four for cubic, a window's mean for area), and backward
is the product with its transpose: exact, one GEMM per axis, and the same code for every
mode. Nearest at a whole scale factor
repeats each element instead, and sums the repeated blocks in backward.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.adaptive_pool import along_axes

# mode: the numbers of spatial axes it resamples
MODES = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "linear": (1,), "bilinear": (2,),
         "bicubic": (2,), "trilinear": (3,), "area": (1, 2, 3)}
_CUBIC_A = -0.75  # PyTorch's (and OpenCV's) cubic convolution coefficient


def resample_args(size: Any, scale_factor: Any, mode: str, align_corners: bool | None,
                  nd: int | None, op: str) -> tuple[Any, Any]:
    """Check interpolate's arguments (nd: spatial axes, None where not known yet); return
    size and scale_factor as tuples of nd (or None). A ValueError in `op`'s name; a
    ShapeError for an input of the wrong rank for the mode."""
    if mode not in MODES:
        raise ValueError(f"{op}: mode must be one of {sorted(MODES)}; got {mode!r}")
    if nd is not None and nd not in MODES[mode]:
        ranks = " or ".join(f"{n + 2}-d" for n in MODES[mode])
        raise ShapeError(f"{op}: mode {mode!r} resamples {ranks} input (N, C, then "
                         f"{' or '.join(_AXES[n] for n in MODES[mode])}); got {nd + 2}-d")
    if (size is None) == (scale_factor is None):
        raise ValueError(f"{op}: give exactly one of size and scale_factor; got size={size!r}, "
                         f"scale_factor={scale_factor!r}")
    if align_corners is not None and mode in ("nearest", "nearest-exact", "area"):
        raise ValueError(f"{op}: align_corners is for the linear and cubic modes; leave it "
                         f"unset for mode {mode!r}")

    def lifted(v: Any, ok: Any, what: str) -> tuple[Any, ...] | None:
        if v is None:
            return None
        vs = tuple(v) if isinstance(v, (list, tuple)) else (v,) * (nd or 1)
        if (nd is not None and len(vs) != nd) or not all(ok(a) for a in vs):
            raise ValueError(f"{op}: {what}; got {v!r}")
        return vs

    return (lifted(size, lambda a: isinstance(a, (int, np.integer)) and a >= 1,
                   "size must be an int >= 1, or one per spatial axis"),
            lifted(scale_factor, lambda a: isinstance(a, (int, float)) and a > 0,
                   "scale_factor must be a number > 0, or one per spatial axis"))


_AXES = {1: "L", 2: "H, W", 3: "D, H, W"}


class Interpolate(Function):
    def __init__(self, size: Any, scale_factor: Any, mode: str,
                 align_corners: bool | None, recompute_scale_factor: bool | None = None,
                 antialias: bool = False) -> None:
        self.size, self.scale_factor = size, scale_factor
        self.mode, self.align_corners = mode, align_corners  # None: unset, as PyTorch's
        self.recompute, self.antialias = bool(recompute_scale_factor), antialias

    def forward(self, x: Any) -> Any:
        nd = x.ndim - 2
        op = "interpolate"
        if nd < 1:
            raise ShapeError(f"{op}: expected input (N, C, L) or (N, C, H, W); got shape "
                             f"{x.shape}")
        size, scale = resample_args(self.size, self.scale_factor, self.mode,
                                    self.align_corners, nd, op)
        ins = x.shape[2:]
        outs = size or tuple(math.floor(n * s) for n, s in zip(ins, scale))
        if min(outs) < 1:
            raise ShapeError(f"{op}: scale_factor {self.scale_factor!r} shrinks {ins} to {outs}")
        if self.antialias and self.mode not in ("bilinear", "bicubic"):
            raise ValueError(f"{op}: anti-alias option is restricted to bilinear and bicubic "
                             f"modes and requires a 4-D tensor as input; got mode "
                             f"{self.mode!r}")
        if self.recompute:  # the coordinates step by in / out, not by 1 / scale_factor
            scale = None
        self.x_shape, self.axes = x.shape, tuple(range(2, x.ndim))
        self.repeats = None
        if self.mode.startswith("nearest") and all(m % n == 0 for n, m in zip(ins, outs)) and \
                (scale is None or all(m == n * s for n, m, s in zip(ins, outs, scale))):
            self.repeats = tuple(m // n for n, m in zip(ins, outs))
            y = x
            for axis, r in zip(self.axes, self.repeats):
                y = y.repeat(r, axis=axis) if r > 1 else y
            return y if y is not x else x.copy()
        dtype = x.dtype if x.dtype.kind == "f" else np.float64
        make = _antialiased if self.antialias else _matrix
        mats = [make(n, m, s, self.mode, bool(self.align_corners), dtype)
                for n, m, s in zip(ins, outs, scale or (None,) * nd)]
        # An axis whose matrix is the identity is left as it is.
        self.mats = [None if a.shape[0] == a.shape[1] and np.array_equal(a, np.eye(len(a)))
                     else a for a in mats]
        if all(m is None for m in self.mats):
            return x.copy()  # never the input's own memory, which later ops may overwrite
        return along_axes(x, self.mats, self.axes).astype(x.dtype, copy=False)

    def backward(self, gy: Any) -> Any:
        if self.repeats is None:
            return along_axes(gy, [None if m is None else m.T for m in self.mats], self.axes)
        # Each input element was repeated into an r_h x r_w block: sum the block, as a sum
        # of strided slices (NumPy's sum over short strided axes is much slower).
        n, c, *ins = self.x_shape
        g = gy.reshape(n, c, *(d for i, r in zip(ins, self.repeats) for d in (i, r)))
        gx = None
        for offsets in itertools.product(*(range(r) for r in self.repeats)):
            part = g[(slice(None), slice(None), *(k for o in offsets for k in (slice(None), o)))]
            if gx is None:
                gx = part.copy()
            else:
                gx += part
        return gx


def _matrix(n: int, m: int, scale_factor: float | None, mode: str, align_corners: bool,
            dtype: Any) -> Any:
    """The (m, n) matrix taking n samples to m along one axis, PyTorch's way: source
    coordinates step by 1 / scale_factor when it is given, else by n / m."""
    step = 1 / scale_factor if scale_factor is not None else n / m
    dst = np.arange(m, dtype=np.float64)
    out = np.zeros((m, n), dtype)
    rows = np.arange(m)
    if mode in ("nearest", "nearest-exact"):
        at = dst * step if mode == "nearest" else (dst + 0.5) * step
        out[rows, np.minimum(np.floor(at).astype(np.int64), n - 1)] = 1
        return out
    if mode == "area":  # adaptive average pooling: output i averages [i n / m, (i+1) n / m)
        start, end = (rows * n) // m, -((-(rows + 1) * n) // m)
        for i, (a, b) in enumerate(zip(start, end)):
            out[i, a:b] = 1 / (b - a)
        return out
    if align_corners:
        src = dst * ((n - 1) / (m - 1) if m > 1 else 0.0)
    elif mode == "bicubic":  # not clamped at 0: the cubic reads bounded indices instead
        src = (dst + 0.5) * step - 0.5
    else:
        src = np.maximum((dst + 0.5) * step - 0.5, 0.0)
    if mode == "bicubic":
        base = np.floor(src)
        t = src - base
        for k, w in zip(range(-1, 3), cubic_weights(t)):
            np.add.at(out, (rows, np.clip(base.astype(np.int64) + k, 0, n - 1)), w)
        return out
    lo = np.minimum(np.floor(src).astype(np.int64), n - 1)
    hi = np.minimum(lo + 1, n - 1)
    frac = src - lo
    np.add.at(out, (rows, lo), 1 - frac)
    np.add.at(out, (rows, hi), frac)
    return out


def _antialiased(n: int, m: int, scale_factor: float | None, mode: str, align_corners: bool,
                 dtype: Any) -> Any:
    """The (m, n) matrix of antialiased resampling (PIL's, as PyTorch computes it): each
    output sample a normalised filter (triangle for bilinear, cubic with a = -0.5 for
    bicubic) over the inputs, widened by the scale where it shrinks, so that every input
    sample counts."""
    if align_corners:
        step = (n - 1) / (m - 1) if m > 1 else 0.0
    else:
        step = 1 / scale_factor if scale_factor is not None else n / m
    half = 1.0 if mode == "bilinear" else 2.0  # the filter's support at scale 1
    support = half * step if step >= 1 else half
    squeeze = 1 / step if step >= 1 else 1.0
    out = np.zeros((m, n), np.float64)
    for i in range(m):
        center = step * (i + 0.5)  # with align_corners too: only the step changes
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), n)
        x = np.abs((np.arange(lo, hi) - center + 0.5) * squeeze)
        if mode == "bilinear":
            w = np.maximum(1 - x, 0)
        else:  # Keys' cubic with a = -0.5, PIL's (not the -0.75 of interpolation without it)
            w = np.where(x < 1, (1.5 * x - 2.5) * x * x + 1,
                         np.where(x < 2, (((x - 5) * x + 8) * x - 4) * -0.5, 0.0))
        total = w.sum()
        out[i, lo:hi] = w / total if total != 0 else w
    return out.astype(dtype)


def cubic_weights(t: Any) -> tuple[Any, ...]:
    """The cubic convolution's weights (a = -0.75, PyTorch's) of the four samples at
    offsets -1, 0, 1, 2 from a point t in [0, 1) past the second: arrays or tensors."""
    return _cubic_far(t + 1), _cubic_near(t), _cubic_near(1 - t), _cubic_far(2 - t)


def _cubic_near(x: Any) -> Any:
    """The cubic convolution kernel on [0, 1]."""
    return ((_CUBIC_A + 2) * x - (_CUBIC_A + 3)) * x * x + 1


def _cubic_far(x: Any) -> Any:
    """The cubic convolution kernel on [1, 2]."""
    return ((_CUBIC_A * x - 5 * _CUBIC_A) * x + 8 * _CUBIC_A) * x - 4 * _CUBIC_A


def interpolate(x: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resample an (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to `size`, or by
    `scale_factor` (output size floor(in * scale)), as PyTorch's `interpolate`.

    Args:
        mode: 'nearest' (source index floor(i / scale)), 'nearest-exact' (floor((i + 0.5)
            / scale)), 'linear' (3-d input), 'bilinear' or 'bicubic' (4-d), 'trilinear'
            (5-d) or 'area' (adaptive average pooling to the output size).
        align_corners: for the linear and cubic modes: True maps the corner samples onto
            each other; False (the default) maps the pixel edges.
        recompute_scale_factor: True steps the source coordinates by in / out, the sizes'
            ratio, rather than by 1 / scale_factor.
        antialias: for bilinear and bicubic: PIL's filter, widened where the output is
            smaller so that every input sample counts (PyTorch's; also its cubic's a = -0.5
            where it upsamples).

    Examples:
        >>> F.interpolate(x, scale_factor=2).shape     # x (8, 16, 7, 7)
        (8, 16, 14, 14)
    """
    return Interpolate(size, scale_factor, mode, align_corners, recompute_scale_factor,
                       antialias).apply(x)
