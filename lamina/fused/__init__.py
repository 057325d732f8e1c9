"""Fused elementwise kernels: a chain of elementwise operations in one pass over memory.

NumPy runs an operation at a time, each a pass over its arrays; a chain of them (GELU's
erf polynomial, Adam's update) is bound by those passes. Here each chain is one kernel,
compiled by numba where it is installed (`pip install 'lamina[fast]'`) and otherwise
NumPy over cache-sized chunks, with the same formulas: both give the same results to
float32 rounding. numba is imported at the first call of an op that loads it (never by
`import lamina`; ReLU, SGD and the loss's log-softmax only use it once another op has
loaded it: `loaded`), and keeps its machine code on disk, so only the first process on a
machine compiles.

    lamina.fused.backend()            # "numba" or "numpy"
    lamina.fused.set_backend("numpy") # the fallback, for comparison; or LAMINA_FUSED=numpy
                                      # in the environment before the first fused call

The kernels take float32 arrays; the ops that call them keep their own NumPy code for other
dtypes (float64 stays exact, for gradient checks).
"""

from __future__ import annotations

import os
import threading
from types import ModuleType
from typing import Any

import numpy as np

from lamina import allocator, parallel
from lamina.fused import numpy_kernels

BACKENDS = ("numba", "numpy")
_chosen: str | None = None  # None: from LAMINA_FUSED, else numba where installed
_numba: ModuleType | None = None
_resolved: str | None = None  # backend()'s answer, kept: every op asks, often per call
_pool_pid: int | None = None  # the process whose threaded_parts() started numba's pool


def set_backend(name: str | None) -> str:
    """Run fused kernels with `name` ("numba" or "numpy"; None: the default again) and
    return the backend in use before. "numba" where numba is missing is an error."""
    global _chosen, _resolved
    if name is not None and name not in BACKENDS:
        raise ValueError(f"fused.set_backend: expected one of {BACKENDS} or None, got {name!r}")
    before = backend()
    if name == "numba" and _load_numba() is None:
        raise ImportError("fused.set_backend('numba'): numba is not installed; "
                          "pip install 'lamina[fast]' (or numba)")
    _chosen, _resolved = name, None
    backend()  # resolved now: a bad LAMINA_FUSED fails here, not in some op
    return before


def backend() -> str:
    """The backend fused kernels run on now: "numba" or "numpy". LAMINA_FUSED is read at
    the first call (and again after `set_backend(None)`)."""
    global _resolved
    if _resolved is None:
        name = _chosen or os.environ.get("LAMINA_FUSED", "").strip().lower() or "numba"
        if name not in BACKENDS:
            raise ValueError(f"LAMINA_FUSED must be one of {BACKENDS}; got {name!r}")
        _resolved = "numba" if name == "numba" and _load_numba() is not None else "numpy"
    return _resolved


def _load_numba() -> ModuleType | None:
    global _numba
    if _numba is None:
        try:
            from lamina.fused.numba_load import load
            _numba = load()
        except ImportError:
            return None
    return _numba


def compiled() -> ModuleType | None:
    """The numba kernels where they run now, else None: for a rule whose NumPy form lives
    with it (Adam's update, in lamina/optim/adam.py)."""
    return _numba if backend() == "numba" else None


def loaded() -> ModuleType | None:
    """The numba kernels where they run now and another op has loaded them already; else
    None, loading nothing. For the ops whose kernel saves a pass or two over memory (ReLU
    with its mask, SGD's update, the loss's log-softmax): on their own (an MLP's step)
    they are not worth numba's load, which costs a process far more memory than their
    kernels save time (benchmarks/RESULTS.md)."""
    return _numba if _numba is not None and backend() == "numba" else None


# The work (elements) from which an op whose kernel saves a few passes over memory loads
# numba itself (see compiled_for): a small CNN's convolutions at batch 64, not at batch 1,
# where NumPy's kernels are as fast and the load would only cost memory.
LOAD_FROM = 1 << 20


def compiled_for(work: int) -> ModuleType | None:
    """compiled() for an op of `work` elements or more (LOAD_FROM), else loaded(): im2col,
    col2im and max pooling load numba for a batch's worth of work, and use it for less
    only once it is loaded."""
    return compiled() if work >= LOAD_FROM else loaded()


def threaded_parts() -> int:
    """How many shares a threaded kernel (numba_threaded.py) should split its work into:
    lamina's thread count, or 1 for the serial kernels instead. 1 where numba does not run,
    inside a share of lamina's own split (parallel.in_task), where idle pool threads may
    spin on the cores (parallel.idle_threads_quiet: lamina.runtime.tune_process sets them
    quiet), and where numba's pool is not OpenMP: its fallback, "workqueue", wakes its
    threads too slowly for a step, and aborts the process when two threads launch on it.
    Before the pool starts, only the main thread may start it. And only in the process
    that lamina saw start it: GNU OpenMP cannot run in a child forked after its pool
    started (numba ends such a child at its first parallel kernel)."""
    global _pool_pid
    parts = parallel.get_num_threads()
    if (parts < 2 or compiled() is None or parallel.in_task()
            or not parallel.idle_threads_quiet()):
        return 1
    import numba

    try:
        layer = numba.threading_layer()
    except ValueError:  # no pool yet: the main thread's launch starts it, here
        if threading.current_thread() is not threading.main_thread():
            return 1
        _pool_pid = os.getpid()
    else:
        if layer != "omp" or _pool_pid != os.getpid():
            return 1
    parallel.openmp_started()
    return parts


def kernels() -> ModuleType:
    """The module of kernels for the backend in use."""
    return _numba if backend() == "numba" else numpy_kernels  # type: ignore[return-value]


def fits(*arrays: Any, contiguous: bool = True) -> bool:
    """Whether the arrays are what the kernels take: float32 NumPy arrays, C-contiguous
    unless `contiguous` is False (im2col reads any strides)."""
    return all(type(a) is np.ndarray and a.dtype == np.float32
               and (a.flags.c_contiguous or not contiguous) for a in arrays)


def flat_memory(*arrays: Any) -> list[Any] | None:
    """1-D views of the arrays' memory, element for element alike, where each is contiguous
    in the same order of its axes (C order, or a permutation such as a convolution's
    channel-major NCHW view); else None. An elementwise kernel may run over these."""
    strides = arrays[0].strides  # sorted(), not np.argsort: a list this short costs less
    order = sorted(range(len(strides)), key=lambda i: -strides[i])
    flat = []
    for a in arrays:
        if a.shape != arrays[0].shape:
            return None
        t = a.transpose(order)
        if not t.flags.c_contiguous:
            return None
        flat.append(t.reshape(-1))
    return flat


def in_pieces(kernel: Any, *arrays: Any) -> None:
    """kernel(*slices) over equal ranges of the flattened arrays, on lamina's threads."""
    flat = [a.reshape(-1) for a in arrays]
    parallel.pieces(flat[0].size, lambda lo, hi: kernel(*(f[lo:hi] for f in flat)))


def in_rows(kernel: Any, rows: Any, *args: Any) -> None:
    """kernel(rows, *args) over ranges of rows, on lamina's threads: every array argument
    has a row (or an element) per row of `rows` and is cut to the range; scalars pass
    whole."""
    n = len(rows)

    def cut(a: Any, lo: int, hi: int) -> Any:
        return a[lo:hi] if isinstance(a, np.ndarray) else a

    parallel.pieces(n, lambda lo, hi: kernel(rows[lo:hi], *(cut(a, lo, hi) for a in args)),
                    unit=rows[0].size if n else 1)


def gelu(x: Any) -> tuple[Any, Any]:
    """(x * Phi(x), Phi(x)) for a float32 C-contiguous x (see `fits`); Phi as in
    lamina/fused/constants.py, within 4e-7 of the exact one in float32."""
    y, phi = np.empty_like(x), np.empty_like(x)
    in_pieces(kernels().gelu_forward, x, y, phi)
    return y, phi


def gelu_backward(x: Any, phi: Any, gy: Any) -> Any:
    """The gradient of GELU from gy, x and the Phi(x) that `gelu` returned."""
    gx = np.empty_like(x)
    in_pieces(kernels().gelu_backward, x, phi, gy, gx)
    return gx


def im2col(kernels: ModuleType, x: Any, k: tuple[int, int], s: tuple[int, int],
           p: tuple[int, int], d: tuple[int, int], out: tuple[int, int]) -> Any:
    """The window matrix (C, KH, KW, N, OH, OW) of x (N, C, H, W) for a convolution of
    kernel k, stride s, padding p and dilation d, by `kernels` (numba's: see `compiled`),
    its channels split over lamina's threads."""
    n, c = x.shape[:2]
    col = allocator.empty((c, *k, n, *out), x.dtype)  # often past malloc's mmap threshold
    # Channel-major, as a convolution's output already is (a free transpose then).
    xc = np.ascontiguousarray(x.transpose(1, 0, 2, 3))
    parallel.pieces(c, lambda lo, hi: kernels.im2col(xc[lo:hi], *k, *s, *p, *d, col[lo:hi]),
                    unit=_unit(col))
    return col


def _unit(col: Any) -> int:
    """Elements a channel of a window matrix (C, KH, KW, N, OH, OW) counts for when
    splitting over threads: none below 2**21 elements in all, where a second thread's
    handoff (and its contention with BLAS's spinning threads) costs more than it saves."""
    return col[0].size if col.size >= 1 << 21 else 0


def col2im(kernels: ModuleType, gcol: Any, hw: tuple[int, int], s: tuple[int, int],
           p: tuple[int, int], d: tuple[int, int]) -> Any:
    """The input gradient (C, N, H, W), channel-major, from window gradients gcol (C, KH,
    KW, N, OH, OW): im2col's adjoint, by `kernels`, its channels split over threads."""
    c, n = gcol.shape[0], gcol.shape[3]
    gx = np.zeros((c, n, *hw), gcol.dtype)
    parallel.pieces(c, lambda lo, hi: kernels.col2im(gcol[lo:hi], *s, *p, *d, gx[lo:hi]),
                    unit=_unit(gcol))
    return gx


def layer_norm(kernels: ModuleType, rows: Any, w: Any, b: Any, eps: float
               ) -> tuple[Any, Any, Any]:
    """(y, xhat, invstd (R,)) of layer norm over the rows (R, D) of a float32 array, by
    `kernels`; w and b (D,) float32, ones and zeros where the layer has none."""
    y, xhat = np.empty_like(rows), np.empty_like(rows)
    invstd = np.empty(len(rows), rows.dtype)
    parallel.pieces(len(rows), lambda lo, hi: kernels.layer_norm(
        rows[lo:hi], w, b, eps, y[lo:hi], xhat[lo:hi], invstd[lo:hi]), unit=rows.shape[1])
    return y, xhat, invstd


def layer_norm_backward(kernels: ModuleType, gy: Any, xhat: Any, invstd: Any, w: Any
                        ) -> tuple[Any, Any, Any]:
    """(gx, gw, gb) of layer norm from gy and the forward's xhat and invstd (R,): gw and gb
    summed over rows in float64 a piece, then in the rows' dtype."""
    gx = np.empty_like(gy)
    sums: list[tuple[Any, Any]] = []

    def piece(lo: int, hi: int) -> None:
        gw, gb = np.zeros(gy.shape[1]), np.zeros(gy.shape[1])
        kernels.layer_norm_backward(gy[lo:hi], xhat[lo:hi], invstd[lo:hi], w, gx[lo:hi],
                                    gw, gb)
        sums.append((gw, gb))

    parallel.pieces(len(gy), piece, unit=gy.shape[1])
    gw, gb = (sum(part) for part in zip(*sums))
    return gx, gw.astype(gy.dtype), gb.astype(gy.dtype)


def softmax(kernels: ModuleType, x: Any, scale: float = 1.0, causal: bool = False) -> Any:
    """softmax(x * scale) over the last axis of a float32 C-contiguous x, by `kernels`, the
    rows split over lamina's threads. causal: x holds attention's scores (..., L, S), and
    query i sees keys 0..i only."""
    rows = x.reshape(-1, x.shape[-1])
    y = allocator.empty(rows.shape, rows.dtype)  # attention's weights: pooled where large
    factor, queries = np.float32(scale), x.shape[-2] if causal else 0
    # Each piece passes its first row's index: the causal mask needs the query of a row.
    # An element costs about two memory passes (its exp), so rows count double toward a
    # second piece (parallel.MIN_PIECE).
    parallel.pieces(len(rows), lambda lo, hi: kernels.softmax_rows(
        rows[lo:hi], y[lo:hi], factor, queries, lo), unit=2 * rows.shape[1])
    return y.reshape(x.shape)


def log_softmax(kernels: ModuleType, rows: Any, out: Any = None) -> Any:
    """log(softmax(rows)) along each row of a float32 C-contiguous (R, C) array, by
    `kernels`, written into `out` (rows itself, or a C-contiguous array of its shape) when
    given; the rows split over lamina's threads, each element counting double (its exp)."""
    y = np.empty_like(rows) if out is None else out
    parallel.pieces(len(rows), lambda lo, hi: kernels.log_softmax_rows(rows[lo:hi], y[lo:hi]),
                    unit=2 * rows.shape[1])
    return y


def softmax_backward(kernels: ModuleType, y: Any, gy: Any, scale: float = 1.0) -> Any:
    """The gradient of `softmax` (with its scale) from its output y and gy (both
    C-contiguous, y's shape)."""
    rows, g = y.reshape(-1, y.shape[-1]), gy.reshape(-1, y.shape[-1])
    gx = allocator.empty(rows.shape, rows.dtype)
    in_rows(kernels.softmax_backward, rows, g, np.float32(scale), gx)
    return gx.reshape(y.shape)
