"""Process-wide settings that make training faster, made by one call, never on import.

`tune_process()` makes four settings, the first three only where the user has not made
their own:
- glibc's malloc keeps freed memory, every thread's in its main arena
  (lamina/allocator.py), so a step does not page-fault its memory back in after the
  previous one gave it to the OS (and a training plan may then free its buffers at
  their last read: lamina/plan/buffers.py);
- OpenBLAS's idle threads sleep soon after each call instead of spinning, for 0.1 s, on
  the cores that lamina's own threads need (lamina/thread_pools.py). OpenBLAS reads this when
  NumPy loads, so it takes effect only in a process that sets it first: the `lamina`
  command does (it starts itself again with the variable set), a script can export
  `OPENBLAS_THREAD_TIMEOUT=20`;
- OpenMP's idle threads (the pool of numba's threaded kernels and MKL's products) likewise
  spin only briefly, read when that pool starts: `GOMP_SPINCOUNT=30000` where MKL runs
  the products on that pool, 1000 where OpenBLAS runs them on threads of its own
  (omp_spin). Only with both set do the threaded kernels run
  (lamina.fused.threaded_parts);
- once lamina runs work on OpenMP's pool (MKL's products, the threaded recurrences),
  NumPy's OpenBLAS runs on one thread (by threadpoolctl, where installed): two pools
  whose threads spin on the same cores stall each other's barriers.

The `lamina` command and `Trainer` call it by default; `LAMINA_TUNE_PROCESS=0` in the
environment turns it off. A plain `import lamina` changes nothing process-wide.

Examples:
    >>> settings = lm.runtime.tune_process()
    >>> sorted(settings)
    ['blas_threads', 'malloc', 'omp_threads', 'one_blas_pool']
"""

from __future__ import annotations

import os

from lamina import allocator, thread_pools
from lamina.fused import mkl_blas

SWITCH = "LAMINA_TUNE_PROCESS"
_done: dict[str, bool] | None = None


def enabled() -> bool:
    """Whether the environment allows tune_process (`LAMINA_TUNE_PROCESS` is not "0")."""
    return os.environ.get(SWITCH, "1") != "0"


def tune_process() -> dict[str, bool]:
    """Make the settings (once per process); returns which took effect."""
    global _done
    if _done is None:
        if not enabled():
            return {"malloc": False, "blas_threads": False, "omp_threads": False,
                    "one_blas_pool": False}
        _done = {"malloc": allocator.keep_freed_memory(),
                 "blas_threads": thread_pools.quiet_idle_blas_threads(),
                 "omp_threads": thread_pools.quiet_idle_omp_threads(omp_spin()),
                 "one_blas_pool": thread_pools.blas_beside_openmp()}
    return dict(_done)


def blas_env() -> dict[str, str]:
    """The environment a new process should start with for lamina's thread-pool settings
    (the user's own values kept)."""
    if not enabled():
        return {}
    wanted = {"OPENBLAS_THREAD_TIMEOUT": thread_pools.BLAS_THREAD_TIMEOUT,
              "GOMP_SPINCOUNT": omp_spin()}
    return {k: v for k, v in wanted.items() if k not in os.environ}


def omp_spin() -> str:
    """GOMP_SPINCOUNT for this process: long where MKL's products share OpenMP's pool with
    lamina's threaded kernels, short where OpenBLAS's threads run them (lamina/thread_pools.py
    says why)."""
    return thread_pools.OMP_SPIN if mkl_blas.would_run() else thread_pools.OMP_SPIN_BESIDE_OPENBLAS
