"""NumPy's BLAS and GNU OpenMP's thread pools beside lamina's own (lamina/parallel.py):
how long their idle threads spin, and OpenBLAS held to one thread where two pools would
take each other's cores.

Two pools whose idle threads spin on the same cores stall each other: OpenBLAS's (NumPy's
products), GNU OpenMP's (numba's threaded kernels, MKL's products: lamina/fused/), and
lamina's own. lamina.runtime.tune_process makes the settings; nothing changes on import.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from lamina.parallel import get_num_threads, in_task

# OpenBLAS's idle threads spin for 2**28 cycles (about 0.1 s) after every call before they
# sleep, holding the cores that lamina's own threads need right after the GEMMs (an
# optimizer's pieces, a split plan's slices). 2**20 cycles (well under a millisecond)
# still covers the gaps between the ops of one step: threads that fall asleep between
# them (2**12 did) are woken for every small GEMM, which made batch-1 inference slower.
BLAS_THREAD_TIMEOUT = "20"

# GNU OpenMP's threads (numba's threaded kernels, lamina/fused/numba_threaded.py, and MKL's
# products, lamina/fused/mkl_blas.py) spin about as long as OpenBLAS's after each parallel
# region by default. Where MKL runs the products on that pool, 30000 spins cover the gaps
# between a batch-1 GPT's products, where layer norms and softmaxes run in between: at
# 3000 the pool fell asleep in them and every product paid its wake-up. It still frees the
# cores soon after the last product of a stretch (benchmarks/RESULTS.md, session 53).
OMP_SPIN = "30000"
# Where OpenBLAS runs the large products on threads of its own (mkl_blas.would_run is
# False), the OpenMP thread still spinning after a layer norm's or a bias's shares holds
# one of the cores the next product's threads need, and each product of a batch-1 GPT ran
# slower by as much. With 1000 spins a threaded LSTM's regions still find the pool awake
# most of the time, where a sleeping pool (0 spins) made every step pay a wake-up; a
# batch-1 LSTM loop still runs somewhat slower than at 30000, a smaller cost than the
# GPT's (benchmarks/RESULTS.md, session 60).
OMP_SPIN_BESIDE_OPENBLAS = "1000"
# Above this, lamina's threaded kernels stand aside (idle_threads_quiet).
OMP_SPIN_MAX = 30000
_blas: Any = None  # threadpoolctl's controller, made at first use; False without it
_held = 0  # open blas_single_threaded blocks, on any thread
_one_blas_pool = False  # tune_process asked: OpenBLAS on one thread beside OpenMP's pool
_openmp_on = False  # lamina has run work on GNU OpenMP's pool in this process
# OpenBLAS's libraries lamina set to one thread for it (once; None before): a large
# product takes their threads back for its call (all_blas_threads).
_pinned: list[Any] | None = None
_held_lock = threading.Lock()  # a split's slices open and close blocks at once


def quiet_idle_blas_threads() -> bool:
    """Set OPENBLAS_THREAD_TIMEOUT unless it is set. OpenBLAS reads it once, when NumPy
    loads it, so this acts only before NumPy's first import; returns whether it did (see
    lamina/runtime.py, which calls it)."""
    if "numpy" in sys.modules or "OPENBLAS_THREAD_TIMEOUT" in os.environ:
        return os.environ.get("OPENBLAS_THREAD_TIMEOUT") == BLAS_THREAD_TIMEOUT
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = BLAS_THREAD_TIMEOUT
    return True


def quiet_idle_omp_threads(spin: str) -> bool:
    """Set GOMP_SPINCOUNT to `spin` (lamina.runtime.omp_spin's choice) unless it is set.
    libgomp reads it once, when it loads (numba's thread pool loads it at its first
    parallel kernel), so this acts only before then; returns whether it did, or had."""
    if "GOMP_SPINCOUNT" in os.environ or "numba.np.ufunc.omppool" in sys.modules:
        return os.environ.get("GOMP_SPINCOUNT") == spin
    os.environ["GOMP_SPINCOUNT"] = spin
    return True


def blas_beside_openmp() -> bool:
    """From lamina's first work on GNU OpenMP's pool on (MKL's products, the threaded
    recurrences: openmp_started), NumPy's OpenBLAS runs on one thread: two pools' threads
    spinning on the same cores stall each other's barriers, and a loop of batch-1 LSTM
    steps fell into stretches of hundreds of steps several times slower. Returns whether
    threadpoolctl can set it (lamina.runtime.tune_process calls it)."""
    global _one_blas_pool
    _one_blas_pool = True
    _pin_blas()  # where the pool started before this call
    return blas_limitable()


def openmp_started() -> None:
    """Called where lamina starts work on GNU OpenMP's pool (see blas_beside_openmp)."""
    global _openmp_on
    if not _openmp_on:
        _openmp_on = True
        _pin_blas()


def _pin_blas() -> None:
    """Once a process: a thread count the user sets after it stands. Not inside a
    blas_single_threaded block, whose end restores the count from before it: the last
    open block's end calls this again."""
    global _pinned
    if (_pinned is not None or not (_one_blas_pool and _openmp_on) or blas_held()
            or not blas_limitable()):
        return
    _pinned = list(_controller().select(internal_api="openblas").lib_controllers)
    for library in _pinned:
        library.set_num_threads(1)


def blas_pinned() -> bool:
    """Whether lamina pinned OpenBLAS to one thread (_pin_blas): only then does a large
    product need all_blas_threads."""
    return _pinned is not None


def all_blas_threads(product: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """product(*args, **kwargs) on all of OpenBLAS's threads where lamina pinned it to one
    (_pin_blas) and this thread runs no share of a split. The pin was made for MKL running
    the large products on OpenMP's pool; where MKL does not run them (LAMINA_BLAS=numpy,
    a CPU not Intel's), a large product held to one thread leaves the other cores idle
    through the longest ops of a step. The pin stays for the small products, whose
    threads' wake-ups beside OpenMP's pool stalled the batch-1 steps."""
    if _pinned is None or in_task() or blas_held():
        return product(*args, **kwargs)
    # Only a library at lamina's pin: a count the user set since stands.
    pinned = [library for library in _pinned if library.get_num_threads() == 1]
    for library in pinned:
        library.set_num_threads(get_num_threads())
    try:
        return product(*args, **kwargs)
    finally:
        for library in pinned:
            library.set_num_threads(1)


def idle_threads_quiet() -> bool:
    """Whether OpenBLAS's and OpenMP's idle threads were told to sleep soon (by
    lamina.runtime.tune_process or the user's environment). Two pools whose idle threads
    spin take each other's cores: lamina's threaded kernels run only where they do not."""
    def at_most(name: str, limit: int) -> bool:
        value = os.environ.get(name, "")
        return value.isdigit() and int(value) <= limit

    return at_most("OPENBLAS_THREAD_TIMEOUT", int(BLAS_THREAD_TIMEOUT)) and \
        at_most("GOMP_SPINCOUNT", OMP_SPIN_MAX)


def openmp_stays_awake() -> bool:
    """Whether GNU OpenMP's idle threads spin long enough (GOMP_SPINCOUNT at OMP_SPIN or
    more) that a kernel called once a layer finds them awake. At OMP_SPIN_BESIDE_OPENBLAS
    they sleep between a step's ops, and each such call pays their wake-up."""
    value = os.environ.get("GOMP_SPINCOUNT", "")
    return value.isdigit() and int(value) >= int(OMP_SPIN)


def _controller() -> Any:
    """threadpoolctl's controller, made at first use; False where it is not installed."""
    global _blas
    if _blas is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            _blas = False
        else:
            _blas = ThreadpoolController()
    return _blas


@functools.cache
def blas_limitable() -> bool:
    """Whether blas_single_threaded can hold BLAS to one thread: threadpoolctl is
    installed (lamina[train] brings it) and finds a BLAS it controls."""
    controller = _controller()
    return bool(controller) and bool(controller.select(user_api="blas").lib_controllers)


@contextlib.contextmanager
def blas_single_threaded() -> Iterator[None]:
    """BLAS on one thread inside the block, restored after (process-wide, as BLAS is; by
    threadpoolctl, and only where it is installed: lamina[train] brings it)."""
    global _held
    with _held_lock:  # MKL's products (lamina/fused/mkl_blas.py) read it: threadpoolctl
        _held += 1    # may not know a library loaded after its controller was made
    try:
        controller = _controller()
        if controller is False:
            yield
            return
        with controller.limit(limits=1, user_api="blas"):
            yield
    finally:
        with _held_lock:
            _held -= 1
        if _pinned is None:  # OpenMP's pool started inside the block
            _pin_blas()


def blas_held() -> bool:
    """Whether a blas_single_threaded block is open."""
    return _held > 0
