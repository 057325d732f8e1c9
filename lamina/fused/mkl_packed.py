"""A product's right operand packed once for many products on MKL (its sgemm_pack and
sgemm_compute): an LSTM's recurrent weight, multiplied at every step of a sequence.

MKL's GEMM repacks both operands into its blocked layout at each call. With a batch of a
few dozen rows against a (4H, H) weight, that repacking of the weight is a large part of
each step's product: packed once for the sequence, the steps' products take markedly
less time than one GEMM each (benchmarks/RESULTS.md, session 70). The packed copy is
MKL's own layout, in memory this module allocates and frees with it; MKL writes about
half again the weight's size of it.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from lamina.fused import mkl_blas
from lamina.fused.blas_layout import NO_TRANS, ROW_MAJOR, layout

_PACKED, _B_MATRIX = 151, 162
_KINDS = {np.dtype(np.float32): ("s", ctypes.c_float), np.dtype(np.float64): ("d", ctypes.c_double)}
_declared: set[str] = set()


class Packed:
    """b (K, N), packed for products a (rows, K) @ b on MKL; `times(a, out)` runs one."""

    def __init__(self, lib: Any, b: Any, rows: int) -> None:
        kind = _declare(lib, b.dtype)
        k, n = b.shape
        trans, ld, _ = layout(b)
        self.shape, self.rows = (k, n), rows
        size = getattr(lib, f"cblas_{kind}gemm_pack_get_size")(_B_MATRIX, rows, n, k)
        self.memory = np.empty(-(-size // b.itemsize), b.dtype)
        getattr(lib, f"cblas_{kind}gemm_pack")(ROW_MAJOR, _B_MATRIX, trans, rows, n, k, 1.0,
                                               b.ctypes.data, ld,
                                               self.memory.ctypes.data)
        self.compute = getattr(lib, f"cblas_{kind}gemm_compute")

    def times(self, a: Any, out: Any) -> Any:
        """out = a @ b, a (rows, K) and out (rows, N) C-contiguous, of b's dtype."""
        k, n = self.shape
        self.compute(ROW_MAJOR, NO_TRANS, _PACKED, self.rows, n, k, a.ctypes.data, k,
                     self.memory.ctypes.data, n, 0.0, out.ctypes.data, n)
        return out


def packed(b: Any, rows: int) -> Packed | None:
    """b (K, N) packed for products of `rows` rows, where MKL runs lamina's products and b
    is a float matrix with one unit stride (a weight or its transposed view); else None.
    The caller runs `times` on this thread (MKL's thread count is set for it here)."""
    lib = mkl_blas.for_this_thread()
    if (lib is None or type(b) is not np.ndarray or b.ndim != 2 or b.dtype not in _KINDS
            or 0 in b.shape or layout(b) is None):
        return None
    return Packed(lib, b, rows)


def _declare(lib: Any, dtype: Any) -> str:
    """Declare the pack routines' C signatures for this dtype, once; returns "s" or "d"."""
    kind, real = _KINDS[np.dtype(dtype)]
    if kind not in _declared:
        c_int, ptr = ctypes.c_int, ctypes.c_void_p
        get_size = getattr(lib, f"cblas_{kind}gemm_pack_get_size")
        get_size.argtypes, get_size.restype = [c_int] * 4, ctypes.c_size_t
        pack = getattr(lib, f"cblas_{kind}gemm_pack")
        pack.argtypes, pack.restype = [c_int] * 6 + [real, ptr, c_int, ptr], None
        compute = getattr(lib, f"cblas_{kind}gemm_compute")
        compute.argtypes = [c_int] * 6 + [ptr, c_int, ptr, c_int, real, ptr, c_int]
        compute.restype = None
        _declared.add(kind)
    return kind
