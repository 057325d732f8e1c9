"""One op's fused kernel over several threads: in shares on numba's OpenMP pool where the
threaded kernels run (lamina.fused.threaded_parts; the *_parts kernels of
numba_parts.py), else in pieces on lamina's own pool (lamina.parallel.pieces), or on the
calling thread alone inside a share of a split plan. Re-exported by lamina.fused.

Both ways cut the same ranges, so an elementwise kernel's results are the same bits
either way and for any number of threads. A kernel with sums along a row (layer norm,
softmax) agrees to float32 rounding: compiled into a share, its loops may vectorize the
sums in another order. A share's arithmetic is fixed by the number of shares, never by
the threads that run them.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from lamina import allocator, parallel
from lamina import fused as _fused

# Elements a share on OpenMP's pool must have: its threads spin between regions, so a
# handoff costs microseconds, not lamina's pool's wake-ups (parallel.MIN_PIECE); a pass
# of this many elements still takes longer than a sleeping OpenMP thread's wake-up.
MIN_SHARE = 1 << 16
_parts_module: ModuleType | None = None


def split_kernels(n: int, unit: int = 1) -> tuple[ModuleType | None, int]:
    """(numba_parts, shares) for an op over n items of `unit` elements on OpenMP's pool,
    or (None, 1) where it runs the old way: numba not running, one thread, too little
    work for a second share, or inside a share of a split already."""
    global _parts_module
    if n * unit < 2 * MIN_SHARE or _fused.backend() != "numba":
        return None, 1
    parts = min(_fused.threaded_parts(), n, n * unit // MIN_SHARE)
    if parts < 2:
        return None, 1
    if _parts_module is None:
        from lamina.fused import numba_parts

        _parts_module = numba_parts
    return _parts_module, parts


def _twin(kernel: Any, n: int, unit: int) -> tuple[Any, int]:
    """(kernel's *_parts twin in numba_parts, shares) for n items of `unit` elements, or
    (None, 1) where split_kernels says no or the kernel has no twin."""
    module, parts = split_kernels(n, unit)
    twin = getattr(module, kernel.__name__ + "_parts", None)
    return (twin, parts) if twin is not None else (None, 1)


def in_pieces(kernel: Any, *args: Any) -> None:
    """kernel(*slices) over equal ranges of the flattened arrays among args (the first
    one an array; the others of its size, or scalars, which pass whole), on lamina's
    threads."""
    flat = [a.reshape(-1) if isinstance(a, np.ndarray) else a for a in args]
    shares, parts = _twin(kernel, flat[0].size, 1)
    if shares is not None:
        shares(parts, *flat)
        return
    parallel.pieces(flat[0].size, lambda lo, hi: kernel(*(_cut(a, lo, hi) for a in flat)))


def in_rows(kernel: Any, rows: Any, *args: Any, unit: int | None = None) -> None:
    """kernel(rows, *args) over ranges of rows, on lamina's threads: every array argument
    has a row (or an element) per row of `rows` and is cut to the range; scalars pass
    whole. unit: the elements a row counts for toward a second share (a row's size)."""
    n = len(rows)
    if unit is None:
        unit = rows[0].size if n else 1
    shares, parts = _twin(kernel, n, unit)
    if shares is not None:
        shares(parts, rows, *args)
        return
    parallel.pieces(n, lambda lo, hi: kernel(rows[lo:hi], *(_cut(a, lo, hi) for a in args)),
                    unit=unit)


def in_ranges(kernel: Any, n: int, unit: int, before: tuple[Any, ...],
              after: tuple[Any, ...]) -> None:
    """kernel(*before, lo, hi, *after) over ranges [lo, hi) covering [0, n), items of
    `unit` elements each, on lamina's threads: for a kernel that takes its range itself
    (Winograd's transforms, whose ranges are channels of arrays they read whole)."""
    shares, parts = _twin(kernel, n, unit)
    if shares is not None:
        shares(parts, *before, n, *after)
        return
    parallel.pieces(n, lambda lo, hi: kernel(*before, lo, hi, *after), unit=unit)


def add_row(y: Any, b: Any) -> None:
    """y (R, N) += b (N,) in place (a linear layer's bias after its GEMM): in shares where
    numba is loaded already and the rows are work for two, else NumPy's one-thread pass."""
    if (_fused.loaded() is not None and y.ndim == 2 and b.shape == y.shape[1:]
            and _fused.fits(y, b)):
        module, parts = split_kernels(*y.shape)
        if module is not None:
            module.add_row_parts(parts, y, b)
            return
    y += b


def _cut(a: Any, lo: int, hi: int) -> Any:
    """Rows or elements [lo, hi) of an array argument; a scalar whole."""
    return a[lo:hi] if isinstance(a, np.ndarray) else a


def gelu(x: Any) -> Any:
    """x * Phi(x) for a float32 C-contiguous x (see `fits`); Phi as in
    lamina/fused/constants.py, within 4e-7 of the exact one in float32."""
    y = np.empty_like(x)
    in_pieces(_fused.kernels().gelu_values, x, y)
    return y


def gelu_grad(x: Any, gy: Any) -> Any:
    """The gradient of `gelu` at x from gy: gy * (Phi(x) + x * N(x))."""
    gx = np.empty_like(x)
    in_pieces(_fused.kernels().gelu_grad, x, gy, gx)
    return gx


def gelu_bias(rows: Any, b: Any) -> tuple[Any, Any]:
    """`gelu` of rows (R, N) + b (N,), float32 and C-contiguous, the bias added in the
    same pass."""
    y, d = np.empty_like(rows), np.empty_like(rows)
    kernel = _fused.kernels().gelu_bias_forward
    parallel.pieces(len(rows), lambda lo, hi: kernel(rows[lo:hi], b, y[lo:hi], d[lo:hi]),
                    unit=rows.shape[1])
    return y, d


def gelu_backward(d: Any, gy: Any) -> Any:
    """The gradient of GELU from gy and the derivative d that `gelu` returned."""
    gx = np.empty_like(d)
    in_pieces(_fused.kernels().gelu_backward, d, gy, gx)
    return gx


def layer_norm(kernels: ModuleType, rows: Any, w: Any, b: Any, eps: float
               ) -> tuple[Any, Any, Any]:
    """(y, mean, invstd) of layer norm over the rows (R, D) of a float32 array, by
    `kernels`, the last two (R,); w and b (D,) float32, ones and zeros where the layer
    has none."""
    y = np.empty_like(rows)
    mean, invstd = np.empty(len(rows), rows.dtype), np.empty(len(rows), rows.dtype)
    module, parts = split_kernels(len(rows), rows.shape[1])
    if module is not None:
        module.layer_norm_parts(parts, rows, w, b, eps, y, mean, invstd)
        return y, mean, invstd
    parallel.pieces(len(rows), lambda lo, hi: kernels.layer_norm(
        rows[lo:hi], w, b, eps, y[lo:hi], mean[lo:hi], invstd[lo:hi]), unit=rows.shape[1])
    return y, mean, invstd


def layer_norm_backward(kernels: ModuleType, gy: Any, x: Any, mean: Any, invstd: Any,
                        w: Any) -> tuple[Any, Any, Any]:
    """(gx, gw, gb) of layer norm from gy, the rows x it normalised and the forward's mean
    and invstd (R,): gw and gb summed over rows in float64 a piece, then in the rows'
    dtype."""
    gx = np.empty_like(gy)
    module, parts = split_kernels(len(gy), gy.shape[1])
    if module is not None:
        gws, gbs = module.sums(parts, gy.shape[1]), module.sums(parts, gy.shape[1])
        module.layer_norm_backward_parts(parts, gy, x, mean, invstd, w, gx, gws, gbs)
        return gx, gws.sum(axis=0).astype(gy.dtype), gbs.sum(axis=0).astype(gy.dtype)
    sums: list[tuple[Any, Any]] = []

    def piece(lo: int, hi: int) -> None:
        gw, gb = np.zeros(gy.shape[1]), np.zeros(gy.shape[1])
        kernels.layer_norm_backward(gy[lo:hi], x[lo:hi], mean[lo:hi], invstd[lo:hi], w,
                                    gx[lo:hi], gw, gb)
        sums.append((gw, gb))

    parallel.pieces(len(gy), piece, unit=gy.shape[1])
    gw, gb = (sum(part) for part in zip(*sums))
    return gx, gw.astype(gy.dtype), gb.astype(gy.dtype)


def softmax(kernels: ModuleType, x: Any, scale: float = 1.0, causal: bool = False,
            offset: int = 0) -> Any:
    """softmax(x * scale) over the last axis of a float32 C-contiguous x, by `kernels`, the
    rows split over lamina's threads. causal: x holds attention's scores (..., L, S), and
    query i sees keys 0..i + offset only (offset: where a block of the queries starts)."""
    rows = x.reshape(-1, x.shape[-1])
    y = allocator.empty(rows.shape, rows.dtype)  # attention's weights: pooled where large
    factor, queries = np.float32(scale), x.shape[-2] if causal else 0
    # Each piece passes its first row's index: the causal mask needs the query of a row.
    # An element costs about two memory passes (its exp), so rows count double toward a
    # second piece (parallel.MIN_PIECE).
    module, parts = split_kernels(len(rows), 2 * rows.shape[1])
    if module is not None:
        module.softmax_rows_parts(parts, rows, y, factor, queries, offset)
    else:
        parallel.pieces(len(rows), lambda lo, hi: kernels.softmax_rows(
            rows[lo:hi], y[lo:hi], factor, queries, lo, offset), unit=2 * rows.shape[1])
    return y.reshape(x.shape)


def log_softmax(kernels: ModuleType, rows: Any, out: Any = None) -> Any:
    """log(softmax(rows)) along each row of a float32 C-contiguous (R, C) array, by
    `kernels`, written into `out` (rows itself, or a C-contiguous array of its shape) when
    given; the rows split over lamina's threads, each element counting double (its exp)."""
    y = np.empty_like(rows) if out is None else out
    in_rows(kernels.log_softmax_rows, rows, y, unit=2 * rows.shape[1])
    return y


def softmax_backward(kernels: ModuleType, y: Any, gy: Any, scale: float = 1.0) -> Any:
    """The gradient of `softmax` (with its scale) from its output y and gy (both
    C-contiguous, y's shape)."""
    rows, g = y.reshape(-1, y.shape[-1]), gy.reshape(-1, y.shape[-1])
    gx = allocator.empty(rows.shape, rows.dtype)
    in_rows(kernels.softmax_backward, rows, g, np.float32(scale), gx)
    return gx.reshape(y.shape)
