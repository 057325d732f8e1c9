"""The level-1 update y = a * x + b * y on the OpenBLAS that NumPy's wheels bundle, through
the CBLAS functions it exports (`scipy_cblas_saxpby64_`: ILP64, names prefixed so as not
to clash with another BLAS in the process).

SGD's momentum step (buf = m * buf + g, then p -= lr * buf) is four passes over memory in
NumPy's ufuncs, each on one core, where nothing else has loaded numba's one-pass kernel
(an MLP's step loads none: numba costs more memory than its kernels save there). As two
axpby calls it is two passes, which OpenBLAS runs on its own threads; the results agree
with NumPy's to float rounding (a kernel may fuse the multiply and the add). Where NumPy
links another BLAS (a conda build, Apple's Accelerate) or exports other names, `axpby`
declines and the caller runs NumPy's passes. Nothing is loaded before the first call:
the library is NumPy's own, already mapped, looked up by ctypes.
"""

from __future__ import annotations

import ctypes
import glob
import os
from typing import Any

import numpy as np

from lamina import parallel, thread_pools

# Where NumPy's wheels keep the libraries they bundle: numpy.libs beside the package
# (Linux, Windows), .dylibs inside it (macOS).
_PLACES = ("../numpy.libs", ".dylibs")
# The names ILP64 builds export the CBLAS functions under (NumPy 2's scipy-openblas64,
# NumPy 1's openblas64_).
_NAMES = ("scipy_cblas_{}axpby64_", "cblas_{}axpby64_")
_fns: dict[Any, Any] | None = None  # dtype -> function; empty where none was found


def _library_functions() -> dict[Any, Any]:
    """NumPy's OpenBLAS's saxpby and daxpby, or {} where they are not found."""
    root = os.path.dirname(np.__file__)
    for place in _PLACES:
        for path in sorted(glob.glob(os.path.join(root, place, "*openblas*"))):
            try:
                lib = ctypes.CDLL(path)
            except OSError:
                continue
            for name in _NAMES:
                found = {}
                for dtype, kind, real in ((np.float32, "s", ctypes.c_float),
                                          (np.float64, "d", ctypes.c_double)):
                    fn = getattr(lib, name.format(kind), None)
                    if fn is None:
                        break
                    i64, ptr = ctypes.c_int64, ctypes.c_void_p
                    fn.argtypes = [i64, real, ptr, i64, real, ptr, i64]
                    fn.restype = None
                    found[np.dtype(dtype)] = fn
                if len(found) == 2:
                    return found
    return {}


def available() -> bool:
    """Whether NumPy's OpenBLAS's axpby was found (looked up at the first call)."""
    global _fns
    if _fns is None:
        _fns = _library_functions()
    return bool(_fns)


def axpby_operands(x: Any, y: Any) -> bool:
    """Whether a BLAS axpby takes x and y as they are: NumPy arrays of one float dtype and
    size, contiguous, y writable (mkl_blas.axpby asks the same)."""
    return (type(x) is np.ndarray and type(y) is np.ndarray and x.dtype == y.dtype
            and x.size == y.size and x.dtype in (np.float32, np.float64)
            and x.flags.c_contiguous and y.flags.c_contiguous and y.flags.writeable)


def axpby(alpha: float, x: Any, beta: float, y: Any) -> bool:
    """y = alpha * x + beta * y in place, on NumPy's OpenBLAS, where it exports the
    function and axpby_operands holds; returns whether it ran. Not inside a share of
    lamina's own threads, where OpenBLAS's threads would contend with them: the caller's
    pieces run NumPy's passes."""
    if (not axpby_operands(x, y) or parallel.in_task() or thread_pools.blas_held()
            or not available()):
        return False
    assert _fns is not None
    _fns[x.dtype](x.size, alpha, x.ctypes.data, 1, beta, y.ctypes.data, 1)
    return True
