"""Keep freed memory in the process, so that each training step does not fault it back in.

NumPy takes array memory from the C library's malloc. glibc's malloc gives memory back to
the OS whenever more than its trim threshold lies free at the top of the heap, and that
threshold follows the largest block freed so far (twice its size, 64 MiB at most). An eager
step frees everything its graph held at once, usually more than that, so the heap shrinks
after every step and grows again in the next, and every page of the regrowth is a page
fault, thousands per step in an eager convolutional network (figures in
benchmarks/RESULTS.md). Keeping up to `TRIM_THRESHOLD` free at the top stops that; the
process then holds its peak heap between steps, as PyTorch's caching allocators and
jemalloc do.

Other threads (a split plan's slices, lamina's pieces) take their memory from arenas of
their own, which glibc hands back to the OS past that threshold too: a heap left empty is
unmapped whole. A GPT step split over two threads faulted 17,000 pages a step on the
second thread and none on the first, which left it a tenth slower and the step waiting
for it (benchmarks/RESULTS.md, session 51). So every thread takes its memory from the
main arena (`M_ARENA_MAX` 1), which also lets one thread reuse what another freed: large
arrays are few, and their allocations seldom wait for each other.

glibc only (Linux); a user's own setting wins: with MALLOC_TRIM_THRESHOLD_,
MALLOC_MMAP_THRESHOLD_, MALLOC_TOP_PAD_, MALLOC_ARENA_MAX or a glibc.malloc tunable in
the environment, lamina leaves malloc alone. Nothing happens on import:
lamina.runtime.tune_process() makes the settings (the `lamina` command and Trainer call
it).

Blocks past malloc's mmap threshold are never kept by malloc; `empty` pools them for the
ops that make such arrays at every step (a convolution's window matrices).
"""

from __future__ import annotations

import ctypes
import math
import os
import sys
import threading
from typing import Any

import numpy as np

# mallopt's parameter numbers, from glibc's malloc.h.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
TRIM_THRESHOLD = 256 << 20
# Setting any threshold turns off glibc's moving ones, so the mmap threshold is fixed at
# the most glibc allows (on 64-bit; the moving one never goes higher either). Larger
# blocks are mapped for themselves and unmapped when freed, as before.
MMAP_THRESHOLD = 32 << 20
USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_",
                 "MALLOC_ARENA_MAX")
_keeping = False  # whether keep_freed_memory has changed malloc's settings


def keep_freed_memory() -> bool:
    """Raise glibc's trim threshold and keep every thread on the main arena (see the
    module's docstring). Returns whether malloc's settings were changed: False off
    glibc, or where the environment sets them. Threads that have allocated already keep
    the arenas they have: call this before starting any."""
    if not on_glibc():
        return False
    if any(v in os.environ for v in USER_SETTINGS) or "glibc.malloc." in os.environ.get(
            "GLIBC_TUNABLES", ""):
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    global _keeping
    _keeping = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                    and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)
                    and mallopt(M_ARENA_MAX, 1))
    return _keeping


def keeps_freed_memory() -> bool:
    """Whether keep_freed_memory has made malloc keep what is freed below MMAP_THRESHOLD:
    then memory freed in a step is taken again in the next without page faults."""
    return _keeping


def give_back_freed_memory() -> None:
    """Return the free memory malloc keeps (keep_freed_memory) to the OS now: for a
    moment after which the process allocates on other threads, whose arenas cannot reuse
    the main thread's free memory where the user's malloc settings give them arenas of
    their own (an execution plan's compile, between its eager check on the main thread
    and the first run of a batch split over threads)."""
    if on_glibc():
        trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
        if trim is not None:
            trim(0)


def on_glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):  # not a POSIX system, or not glibc
        return False



# -- arrays past the mmap threshold ---------------------------------------------------------
# glibc maps every block of MMAP_THRESHOLD or more for itself and unmaps it when freed, so
# each such array (a convolution's window matrix: 75 MB for 64 channels of 32 32x32
# images) is faulted in page by page again at every step, which costs more than the copy
# that fills it. `empty` keeps them: an array handed out is a view of a pooled block,
# and a block is free again once nothing refers to it (no view of it is alive).

POOL_BYTES = 1 << 30  # the most the pool holds; past it, arrays come from NumPy as usual
_pool: dict[int, list[np.ndarray]] = {}
_pool_lock = threading.Lock()
_free_refs: int | None = None  # _refs() of a block only the pool holds, measured once


def empty(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """np.empty(shape, dtype), its memory reused from an earlier array of the same size
    that is no longer referenced where it is past MMAP_THRESHOLD bytes."""
    dtype = np.dtype(dtype)
    # math.prod: np.prod converts the tuple to an array first, costing as much as a
    # small op's whole kernel
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes < MMAP_THRESHOLD:
        return np.empty(shape, dtype)
    global _free_refs
    with _pool_lock:
        blocks = _pool.setdefault(nbytes, [])
        block = _first_free(blocks)
        if block is None:
            if _pooled() + nbytes > POOL_BYTES:
                _drop_free_blocks()  # may drop this size's empty list too
                blocks = _pool.setdefault(nbytes, [])
            if _pooled() + nbytes > POOL_BYTES:
                return np.empty(shape, dtype)
            blocks.append(np.empty(nbytes, np.uint8))
            if _free_refs is None:  # measured the way _first_free measures
                _free_refs = _refs(blocks, len(blocks) - 1)
            block = blocks[-1]
        return block.view(dtype).reshape(shape)  # the view refers to the block: in use


def _refs(blocks: list[np.ndarray], i: int) -> int:
    """References to blocks[i]: the list's, getrefcount's argument and any array's that
    still views it."""
    return sys.getrefcount(blocks[i])


def _first_free(blocks: list[np.ndarray]) -> np.ndarray | None:
    for i in range(len(blocks)):
        if _refs(blocks, i) == _free_refs:
            return blocks[i]
    return None


def _pooled() -> int:
    return sum(b.nbytes for blocks in _pool.values() for b in blocks)


def _drop_free_blocks() -> None:
    for size, blocks in list(_pool.items()):
        blocks[:] = [blocks[i] for i in range(len(blocks)) if _refs(blocks, i) != _free_refs]
        if not blocks:
            del _pool[size]
