"""numba's decorator for lamina's kernels: machine code kept on disk, read back without
numba's compiler registries.

At a kernel's first call in a process, numba's own cache refreshes its compiler's
registries before it reads the kernel's machine code from disk: it imports some seventy
modules of typing and lowering (numba.np.arraymath, numba.typed, numba.np.random, ...)
that only a compile reads. Reading machine code back needs numba's runtime (NRT) alone,
whose functions the code calls. lamina's kernels use `jit`, whose cache starts the
runtime (its functions read from disk too: numba_runtime.py) and reads the code; a kernel
not on disk yet compiles as with numba's own cache, whose compiler refreshes the
registries itself (numba.core.compiler), after numba_load.before_compile.

numba keeps a kernel's code while the file that defines it is unchanged (its time and
size). A kernel that calls one of another file (numba_parts' shares call numba_windows'
im2col, the threaded LSTM steps numba_rows' product) has the callee compiled into it, so
an edit of the callee's file alone left the caller's old code on disk, run as it was.
Each kernel's cache here is stale once any of the kernel files changes (kernels_stamp).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import numba
from numba.core.caching import FunctionCache

from lamina.fused.numba_load import before_compile
from lamina.fused.numba_runtime import start


@functools.cache
def kernels_stamp(folder: str = os.path.dirname(__file__)) -> tuple[Any, ...]:
    """The name, time and size of every kernel file (numba_*.py) in `folder`, read once a
    process: part of each kernel's cache stamp, so that an edit of any of them recompiles
    them all (a kernel inlines the kernels it calls, from whichever file)."""
    names = sorted(n for n in os.listdir(folder) if n.startswith("numba_") and n.endswith(".py"))
    stats = [os.stat(os.path.join(folder, n)) for n in names]
    return tuple((n, st.st_mtime_ns, st.st_size) for n, st in zip(names, stats))


class KernelCache(FunctionCache):
    """numba's FunctionCache, reading machine code back without the registries' refresh,
    and stale once any kernel file changes (kernels_stamp), not only the kernel's own."""

    def __init__(self, py_func: Any) -> None:
        super().__init__(py_func)
        # numba compares this stamp, its own file's, with the one its index was saved with
        stamp = self._cache_file._source_stamp
        self._cache_file._source_stamp = (stamp, kernels_stamp())

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        start(target_context, self.cache_path)  # once a process: the code calls it
        loaded = None  # also where the guard swallows an error reading the file
        with self._guard_against_spurious_io_errors():
            loaded = self._load_overload(sig, target_context)
        if loaded is None:  # not on disk: numba compiles it next
            before_compile()
        return loaded


def jit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """numba.njit(**options), the machine code cached on disk through KernelCache."""
    def compile_(fn: Callable[..., Any]) -> Any:
        kernel = numba.njit(**options)(fn)
        kernel._cache = KernelCache(kernel.py_func)  # what numba's enable_caching() sets
        return kernel

    return compile_
