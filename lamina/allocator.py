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

glibc only (Linux); a user's own setting wins: with MALLOC_TRIM_THRESHOLD_,
MALLOC_MMAP_THRESHOLD_, MALLOC_TOP_PAD_ or a glibc.malloc tunable in the environment,
lamina leaves malloc alone. Nothing happens on import: lamina.runtime.tune_process()
makes the setting (the `lamina` command and Trainer call it).
"""

from __future__ import annotations

import ctypes
import os

# mallopt's parameter numbers, from glibc's malloc.h.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
TRIM_THRESHOLD = 256 << 20
# Setting any threshold turns off glibc's moving ones, so the mmap threshold is fixed at
# the most glibc allows (on 64-bit; the moving one never goes higher either). Larger
# blocks are mapped for themselves and unmapped when freed, as before.
MMAP_THRESHOLD = 32 << 20
USER_SETTINGS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")


def keep_freed_memory() -> bool:
    """Raise glibc's trim threshold (see the module's docstring). Returns whether malloc's
    settings were changed: False off glibc, or where the environment sets them."""
    if not on_glibc():
        return False
    if any(v in os.environ for v in USER_SETTINGS) or "glibc.malloc." in os.environ.get(
            "GLIBC_TUNABLES", ""):
        return False
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def on_glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):  # not a POSIX system, or not glibc
        return False

