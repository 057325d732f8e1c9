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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
from numba.core.caching import FunctionCache

from lamina.fused.numba_load import before_compile
from lamina.fused.numba_runtime import start


class KernelCache(FunctionCache):
    """numba's FunctionCache, reading machine code back without the registries' refresh."""

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
