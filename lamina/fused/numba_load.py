"""Loading numba's kernels, and compiling them without the SciPy BLAS that numba loads
for itself.

A process whose kernels are on disk already reads their machine code back and imports
none of numba's compiler registries (numba_cache.py). One that compiles imports them, and
at its import `numba.np.arraymath` imports `scipy.linalg.cython_blas` where SciPy is
installed, to choose how its own `np.correlate` and `np.convolve` take inner products. That
import loads `scipy.linalg` and SciPy's own OpenBLAS, with a thread of its pool: about
17 MB for a process in which no lamina kernel calls BLAS from numba. So before lamina's
first compile, `numba.np.arraymath` is imported with that one import refused (where the
process has not imported `scipy.linalg` already), and numba takes its own loop there, as it
does without SciPy. Nothing else changes: numba code that calls `np.dot` imports SciPy's
BLAS when it is compiled. (For the fraction of a second numba's module takes to load,
another thread importing that same SciPy module would be refused too.)
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

_BLAS = "scipy.linalg.cython_blas"


def load() -> ModuleType:
    """lamina.fused.numba_kernels, imported; ImportError where numba is not installed."""
    _prefer_openmp()
    from lamina.fused import numba_kernels

    return numba_kernels


def before_compile() -> None:
    """Import `numba.np.arraymath`, which numba's compiler imports, with SciPy's BLAS
    refused unless the process has it already: called before lamina's kernels compile."""
    if "numba.np.arraymath" in sys.modules:
        return
    if "scipy.linalg" in sys.modules or _BLAS in sys.modules:
        import numba.np.arraymath  # noqa: F401 (SciPy's BLAS is loaded: nothing to save)
        return
    sys.modules[_BLAS] = None  # type: ignore[assignment]  # None: import refused
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if sys.modules.get(_BLAS, False) is None:
            del sys.modules[_BLAS]


def _prefer_openmp() -> None:
    """Make GNU OpenMP numba's first choice of thread pool, unless the user chose one.
    numba prefers TBB where it is installed (MKL's wheel brings it), and lamina's threaded
    kernels run on OpenMP only (lamina.fused.threaded_parts), sharing its pool with MKL's
    products (lamina/fused/mkl_blas.py)."""
    import numba

    chosen = ("NUMBA_THREADING_LAYER", "NUMBA_THREADING_LAYER_PRIORITY")
    if not any(os.environ.get(name) for name in chosen):
        numba.config.THREADING_LAYER_PRIORITY = ["omp", "tbb", "workqueue"]
