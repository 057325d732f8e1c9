"""Matrix products on Intel's MKL where it is installed (`pip install 'lamina[fast]'` brings
it on Linux x86-64) and the CPU is Intel's; NumPy's BLAS otherwise.

On Intel CPUs NumPy's OpenBLAS runs the large products of a step (a layer's GEMMs, a
convolution's, Winograd's 16, attention's heads) slower than MKL, the BLAS PyTorch links:
convolutions and the layers of a GPT block spent a sixth to a fifth less time in them on
MKL (benchmarks/RESULTS.md). Small products stay NumPy's (MIN_WORK), unless they read a
large operand (MIN_OPERAND). A stack no one stride walks (attention's heads, read through
a transposed view of the projections) goes to MKL as one batch of matrix addresses:
NumPy's matmul runs such a stack a matrix at a time, on one thread. MKL runs with GNU
OpenMP's threads, the pool numba's threaded kernels use already: lamina/thread_pools.py's
spin setting covers both. It is loaded at the first product it takes, never by `import
lamina`. LAMINA_BLAS=numpy in the environment keeps every product NumPy's. Both give the
same results to float32 rounding.

    lamina.fused.mkl_blas.backend()   # "mkl" or "numpy"
"""

from __future__ import annotations

import ctypes
import os
import threading
from importlib import metadata
from typing import Any

import numpy as np

from lamina import parallel, thread_pools
from lamina.fused import numpy_blas
from lamina.fused.blas_layout import NO_TRANS, ROW_MAJOR, TRANS, addresses, layout

BACKENDS = ("mkl", "numpy")
# Products of fewer multiply-adds stay NumPy's: there MKL's threads, woken for each
# product, cost more than its kernels save (a small CNN's first layer and a ResNet's
# batch-1 products ran slower on MKL; benchmarks/RESULTS.md).
MIN_WORK = 1 << 22
# ... unless an operand has this many elements (1 MB of float32): a product on a few rows
# (a layer's at batch 1) reads its whole weight for little work, and MKL reads it on both
# cores, NumPy's OpenBLAS on one (a batch-1 MLP's 784 x 1024 layer: 39 against 122 us;
# the batch-1 MLP's step a seventh faster: benchmarks/RESULTS.md, session 69).
MIN_OPERAND = 1 << 18
# A stack that goes by addresses goes to MKL where each product is at least this many
# multiply-adds, or where its right operand is transposed (attention's q @ k^T). Below
# it, a small transformer's weights @ values (50 x 50 x 32) run faster on NumPy's
# BLAS, a matrix at a time; its q @ k^T, slower (benchmarks/RESULTS.md).
MIN_LISTED = 1 << 18
_lib: Any = None  # the loaded library; False where it cannot load
_resolved: str | None = None
_local = threading.local()  # the MKL thread count this thread last set
_pid: int | None = None  # the process that loaded MKL: a forked child runs it on one thread


def backend() -> str:
    """"mkl" where MKL runs the products, else "numpy" (LAMINA_BLAS, read at first call)."""
    global _resolved
    if _resolved is None:
        name = _wanted()
        if name not in BACKENDS:
            raise ValueError(f"LAMINA_BLAS must be one of {BACKENDS}; got {name!r}")
        _resolved = "mkl" if name == "mkl" and _load() else "numpy"
    return _resolved


def would_run() -> bool:
    """Whether backend() would be "mkl": LAMINA_BLAS allows it, the CPU is Intel's and
    the mkl package is installed. Loads nothing (lamina.runtime picks OpenMP's spin by
    it before the pool starts)."""
    if _resolved is not None:
        return _resolved == "mkl"
    return _wanted() == "mkl" and _usable_path() is not None


def _wanted() -> str:
    """The backend LAMINA_BLAS asks for, "mkl" where it is unset."""
    return os.environ.get("LAMINA_BLAS", "").strip().lower() or "mkl"


def _usable_path() -> str | None:
    """MKL's runtime library where the mkl package is installed and the CPU is Intel's."""
    return _mkl_path() if _intel_cpu() else None


def _intel_cpu() -> bool:
    try:
        with open("/proc/cpuinfo") as f:
            return "GenuineIntel" in f.read(4096)
    except OSError:
        return False


def _load() -> Any:
    """MKL's runtime library with GNU OpenMP threading, or False where any part is
    missing (the mkl package, libgomp, an Intel CPU)."""
    global _lib, _pid
    if _lib is None:
        _lib, _pid = False, os.getpid()
        path = _usable_path()
        if path is not None:
            try:
                # What MKL's GNU layer links to (numba's OpenMP pool is the same library).
                ctypes.CDLL("libgomp.so.1", mode=ctypes.RTLD_GLOBAL)
                lib = ctypes.CDLL(path)
            except OSError:
                return _lib
            lib.MKL_Set_Threading_Layer(ctypes.c_int(3))  # MKL_THREADING_GNU
            lib.MKL_Set_Interface_Layer(ctypes.c_int(0))  # LP64: its integers are C ints
            c_int, ptr = ctypes.c_int, ctypes.c_void_p
            for kind, real in (("s", ctypes.c_float), ("d", ctypes.c_double)):
                one = getattr(lib, f"cblas_{kind}gemm")
                one.argtypes = [c_int] * 6 + [real, ptr, c_int, ptr, c_int, real, ptr, c_int]
                stack = getattr(lib, f"cblas_{kind}gemm_batch_strided")
                stack.argtypes = [c_int] * 6 + [real, ptr, c_int, c_int, ptr, c_int, c_int,
                                                real, ptr, c_int, c_int, c_int]
                listed = getattr(lib, f"cblas_{kind}gemm_batch")  # by matrix addresses
                listed.argtypes = [c_int] + [ptr] * 13 + [c_int, ptr]
                one.restype = stack.restype = listed.restype = None
                axpby = getattr(lib, f"cblas_{kind}axpby")  # y = a * x + b * y
                axpby.argtypes = [c_int, real, ptr, c_int, real, ptr, c_int]
                axpby.restype = None
            lib.MKL_Set_Num_Threads_Local.argtypes = [c_int]
            _lib = lib
            thread_pools.openmp_started()
    return _lib


def _mkl_path() -> str | None:
    try:
        files = metadata.distribution("mkl").files or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name.startswith("libmkl_rt.so"):
            return str(f.locate())
    return None


def for_this_thread() -> Any:
    """MKL's library, its thread count set for this thread's next calls (see
    _pick_threads), where MKL runs the products; else None. For a caller of MKL's other
    routines (lamina/fused/mkl_packed.py)."""
    if backend() != "mkl":
        return None
    _pick_threads()
    return _lib


def ready() -> bool:
    """Whether MKL is loaded and runs the products; loads nothing."""
    return bool(_lib) and _resolved == "mkl"


def axpby(alpha: float, x: Any, beta: float, y: Any) -> bool:
    """y = alpha * x + beta * y in place, in one pass over memory, where MKL runs the
    products already and x and y are contiguous arrays of one float dtype and size; returns
    whether it ran (else the caller runs NumPy's passes). An elementwise update (SGD's
    momentum) reads each array once here against twice or more in NumPy's ufuncs. It
    never loads MKL: a process that runs no large product would pay the load for this."""
    if not ready() or not numpy_blas.axpby_operands(x, y):
        return False
    _pick_threads()
    fn = _lib.cblas_saxpby if x.dtype == np.float32 else _lib.cblas_daxpby
    fn(x.size, alpha, x.ctypes.data, 1, beta, y.ctypes.data, 1)
    return True


def matmul(a: Any, b: Any, out: Any = None) -> Any:
    """a (..., M, K) @ b (..., K, N) into `out` (or a new C-contiguous array), through MKL
    where it runs and the operands suit it (one float dtype, equal stacks, a unit stride
    in each matrix, work of at least MIN_WORK or an operand of MIN_OPERAND elements), else
    np.matmul."""
    if (type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 == b.ndim
            and backend() != "mkl" and not thread_pools.blas_pinned()):
        # What the rest does with two matrices, without its checks, which cost a small
        # product (a layer's at batch 1) nearly as much as the product itself. NumPy's
        # own output of a 2-D product is C-ordered, as the rest allocates it.
        return np.matmul(a, b, out=out)
    shape = _product_shape(a, b)
    if shape is None:
        return np.matmul(a, b, out=out)
    given = out is not None
    if not given:  # C-ordered on NumPy's path too: its own output follows the operands'
        out = np.empty(shape, a.dtype)
    if backend() != "mkl":
        return thread_pools.all_blas_threads(np.matmul, a, b, out=out)
    if given and (out.shape != shape or out.dtype != a.dtype or np.may_share_memory(out, a)
                  or np.may_share_memory(out, b)):
        return np.matmul(a, b, out=out)
    (m, k), n = a.shape[-2:], shape[-1]
    la, lb, lc = layout(a), layout(b), layout(out)
    if la is None or lb is None or lc is None or lc[0] != NO_TRANS or lc[2] is None:
        return np.matmul(a, b, out=out)  # lc[2] None: out's own matrices might overlap
    listed = la[2] is None or lb[2] is None  # a stack no one stride walks
    if listed and m * n * k < MIN_LISTED and lb[0] != TRANS:
        return np.matmul(a, b, out=out)
    _pick_threads()
    real = a.dtype == np.float32
    args = (ROW_MAJOR, la[0], lb[0], m, n, k, 1.0, a.ctypes.data, la[1])
    if a.size == m * k:
        gemm = _lib.cblas_sgemm if real else _lib.cblas_dgemm
        gemm(*args, b.ctypes.data, lb[1], 0.0, out.ctypes.data, lc[1])
    elif not listed:
        gemm = _lib.cblas_sgemm_batch_strided if real else _lib.cblas_dgemm_batch_strided
        gemm(*args, la[2], b.ctypes.data, lb[1], lb[2], 0.0, out.ctypes.data, lc[1], lc[2],
             a.size // (m * k))
    else:
        _listed(a, b, out, la, lb, lc)
    return out


def _listed(a: Any, b: Any, out: Any, la: tuple[int, int, int | None],
            lb: tuple[int, int, int | None], lc: tuple[int, int, int | None]) -> None:
    """out = a @ b as one batch of matrices given by their addresses: one group, every
    matrix of a shape and layout."""
    count = out.size // (out.shape[-2] * out.shape[-1])
    ints = np.array([la[0], lb[0], *out.shape[-2:], a.shape[-1], la[1], lb[1], lc[1],
                     count], np.intc)
    scalars = np.array([1.0, 0.0], a.dtype)
    where = [addresses(x) for x in (a, b, out)]
    gemm = _lib.cblas_sgemm_batch if a.dtype == np.float32 else _lib.cblas_dgemm_batch
    at = ints.ctypes.data
    size, alpha = ints.itemsize, scalars.ctypes.data
    gemm(ROW_MAJOR, at, at + size, at + 2 * size, at + 3 * size, at + 4 * size, alpha,
         where[0].ctypes.data, at + 5 * size, where[1].ctypes.data, at + 6 * size,
         alpha + scalars.itemsize, where[2].ctypes.data, at + 7 * size, 1, at + 8 * size)


def _product_shape(a: Any, b: Any) -> tuple[int, ...] | None:
    """The product's shape where MKL may take it, else None."""
    if (type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim < 2
            or a.ndim != b.ndim or a.shape[:-2] != b.shape[:-2] or a.dtype != b.dtype
            or a.dtype not in (np.float32, np.float64) or a.shape[-1] != b.shape[-2]):
        return None
    shape = (*a.shape[:-1], b.shape[-1])
    if (a.size * b.shape[-1] < MIN_WORK and max(a.size, b.size) < MIN_OPERAND) or 0 in shape:
        return None
    return shape


def _pick_threads() -> None:
    """One thread inside a share of lamina's own split (each thread its own products) and
    in a forked child, where GNU OpenMP's pool does not survive the fork; else all."""
    _threads(1 if parallel.in_task() or thread_pools.blas_held() or os.getpid() != _pid else 0)


def _threads(n: int) -> None:
    """MKL's thread count for this thread's next products (0: its default, all cores)."""
    if getattr(_local, "threads", 0) != n:
        _lib.MKL_Set_Num_Threads_Local(n)
        _local.threads = n
