"""Arrays in memory that processes share: what `Tensor.share_memory_()` moves a tensor to.

Each shared array lives in its own block of shared memory, an anonymous file (Linux's
memfd, elsewhere a temporary file already unlinked) mapped with MAP_SHARED. A process
forked afterwards maps the same pages, so a parameter an optimizer updates in place there
changes here too (Hogwild training). A spawned process gets the block's file descriptor
when the tensor is sent to it (lamina.multiprocessing's reductions), never a copy of the
data and never a name in a global namespace that could outlive the processes. The file
descriptor is closed, and the memory freed, once no array of any process maps it.
"""

from __future__ import annotations

import mmap
import os
import tempfile
import threading
import weakref
from typing import Any

import numpy as np

# id(mmap) -> (file descriptor, bytes): the blocks this process maps, for sending them on
_blocks: dict[int, tuple[int, int]] = {}
_lock = threading.Lock()


def _new_file(nbytes: int) -> int:
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("lamina-shared", os.MFD_CLOEXEC)
    else:  # no memfd: an unlinked temporary file, which the OS frees like one
        with tempfile.TemporaryFile() as f:
            fd = os.dup(f.fileno())
    os.ftruncate(fd, nbytes)
    return fd


def _map(fd: int, nbytes: int) -> mmap.mmap:
    block = mmap.mmap(fd, nbytes)  # MAP_SHARED: writes reach every process mapping it
    with _lock:
        _blocks[id(block)] = (fd, nbytes)
    weakref.finalize(block, _release, id(block), fd)
    return block


def _release(key: int, fd: int) -> None:
    with _lock:
        _blocks.pop(key, None)
    os.close(fd)


def _block_of(array: Any) -> mmap.mmap | None:
    """The shared block under `array`; None where it is not in one of this module's."""
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return base if isinstance(base, mmap.mmap) and id(base) in _blocks else None


def is_shared(array: Any) -> bool:
    """Whether `array` lies in shared memory made here (a view of it included)."""
    return _block_of(array) is not None


def share(array: np.ndarray) -> np.ndarray:
    """A copy of `array` (same shape, dtype and values, C order) in a new shared block."""
    nbytes = max(array.nbytes, 1)  # mmap refuses an empty mapping
    block = _map(_new_file(nbytes), nbytes)
    shared = np.ndarray(array.shape, array.dtype, buffer=block)
    shared[...] = array
    return shared


def describe(array: np.ndarray) -> tuple[int, int, int]:
    """(file descriptor, block bytes, byte offset of array's first element) of a shared
    array, for another process to map it (see attach)."""
    block = _block_of(array)
    if block is None:
        raise ValueError("shared_memory: the array is not in a shared block")
    fd, nbytes = _blocks[id(block)]
    start = np.frombuffer(block, np.uint8, count=1).__array_interface__["data"][0]
    return fd, nbytes, array.__array_interface__["data"][0] - start


def attach(fd: int, nbytes: int, offset: int, shape: tuple[int, ...],
           strides: tuple[int, ...], dtype: str) -> np.ndarray:
    """The array another process described (see describe), mapped from `fd`, a file
    descriptor of this process's own, which the block now owns."""
    block = _map(fd, nbytes)
    return np.ndarray(shape, np.dtype(dtype), buffer=block, offset=offset, strides=strides)
