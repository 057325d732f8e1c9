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

from lamina import allocator, parallel, thread_pools
from lamina.fused import numpy_kernels

BACKENDS = ("numba", "numpy")
_chosen: str | None = None  # None: from LAMINA_FUSED, else numba where installed
_numba: ModuleType | None = None
_resolved: str | None = None  # backend()'s answer, kept: every op asks, often per call
_pool_pid: int | None = None  # the process whose threaded_parts() started numba's pool
_pool_omp = False  # threaded_parts() found numba's pool on OpenMP (in _pool_pid)


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
# ... and where the op runs a backward as well (a training step): its backward kernels
# (col2im, pooling's gradient) save the most, at every step, so a small CNN's training
# step at batch 16 gains from numba while its batch-1 inference still never loads it.
TRAINING_LOAD_FROM = 1 << 17


def compiled_for(work: int, backward: bool = False) -> ModuleType | None:
    """compiled() for an op of `work` elements or more (LOAD_FROM; TRAINING_LOAD_FROM where
    `backward`, the op taking gradients), else loaded(): im2col, col2im and max pooling
    load numba for a batch's worth of work, and use it for less only once it is loaded."""
    return compiled() if work >= (TRAINING_LOAD_FROM if backward else LOAD_FROM) else loaded()


def threaded_parts() -> int:
    """How many shares a threaded kernel (numba_threaded.py) should split its work into:
    lamina's thread count, or 1 for the serial kernels instead. 1 where numba does not run,
    inside a share of lamina's own split (parallel.in_task), where idle pool threads may
    spin on the cores (thread_pools.idle_threads_quiet: lamina.runtime.tune_process sets them
    quiet), and where numba's pool is not OpenMP: its fallback, "workqueue", wakes its
    threads too slowly for a step, and aborts the process when two threads launch on it.
    Before the pool starts, only the main thread may start it. And only in the process
    that lamina saw start it: GNU OpenMP cannot run in a child forked after its pool
    started (numba ends such a child at its first parallel kernel)."""
    global _pool_pid, _pool_omp
    parts = parallel.get_num_threads()
    if (parts < 2 or compiled() is None or parallel.in_task()
            or not thread_pools.idle_threads_quiet()):
        return 1
    if _pool_omp and _pool_pid == os.getpid():  # found so before: a pool keeps its layer
        return parts
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
        _pool_omp = True
    thread_pools.openmp_started()
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


def im2col(kernels: ModuleType, x: Any, k: tuple[int, int], s: tuple[int, int],
           p: tuple[int, int], d: tuple[int, int], out: tuple[int, int]) -> Any:
    """The window matrix (C, KH, KW, N, OH, OW) of x (N, C, H, W) for a convolution of
    kernel k, stride s, padding p and dilation d, by `kernels` (numba's: see `compiled`),
    its channels split over lamina's threads."""
    n, c = x.shape[:2]
    col = allocator.empty((c, *k, n, *out), x.dtype)  # often past malloc's mmap threshold
    # Channel-major, as a convolution's output already is (a free transpose then).
    xc = np.ascontiguousarray(x.transpose(1, 0, 2, 3))
    in_rows(kernels.im2col, xc, *k, *s, *p, *d, col, unit=_unit(col))
    return col


def _unit(col: Any) -> int:
    """Elements a channel of a window matrix (C, KH, KW, N, OH, OW) counts for when
    splitting over threads. On OpenMP's pool (threaded_parts), its copy plus a row's setup
    per row of OW windows, which costs about as much as copying ROW_SETUP elements: a
    small map's short rows (a ResNet's 4x4 at batch 1) are mostly setup. On lamina's own
    pool, nothing below 2**21 elements in all, where a second thread's handoff (and its
    contention with BLAS's spinning threads) costs more than it saves."""
    if threaded_parts() > 1:
        return col[0].size // col.shape[-1] * (col.shape[-1] + ROW_SETUP)
    return col[0].size if col.size >= 1 << 21 else 0


# A window-matrix row's setup in elements' worth of copying (see _unit).
ROW_SETUP = 16


def col2im(kernels: ModuleType, gcol: Any, hw: tuple[int, int], s: tuple[int, int],
           p: tuple[int, int], d: tuple[int, int]) -> Any:
    """The input gradient (C, N, H, W), channel-major, from window gradients gcol (C, KH,
    KW, N, OH, OW): im2col's adjoint, by `kernels`, its channels split over threads."""
    c, n = gcol.shape[0], gcol.shape[3]
    gx = np.zeros((c, n, *hw), gcol.dtype)
    in_rows(kernels.col2im, gcol, *s, *p, *d, gx, unit=_unit(gcol))
    return gx



# Last: shares.py and few_rows.py read this module's functions (kernels, threaded_parts)
# at call time.
from lamina.fused.few_rows import row_product  # noqa: E402
from lamina.fused.shares import (  # noqa: E402
    add_row,
    gelu,
    gelu_backward,
    gelu_bias,
    gelu_grad,
    in_pieces,
    in_ranges,
    in_rows,
    layer_norm,
    layer_norm_backward,
    log_softmax,
    softmax,
    softmax_backward,
    split_kernels,
)

__all__ = ["BACKENDS", "add_row", "backend", "col2im", "compiled", "compiled_for", "fits",
           "flat_memory", "gelu", "gelu_backward", "gelu_bias", "gelu_grad",
           "im2col", "in_pieces", "in_ranges",
           "in_rows", "kernels", "layer_norm", "layer_norm_backward", "loaded", "log_softmax",
           "row_product", "set_backend", "softmax", "softmax_backward", "split_kernels",
           "threaded_parts"]
