"""lamina.runtime.tune_process() keeps freed memory (lamina/allocator.py): a step that
frees what it held does not fault the same memory back in on the next step; a plain
`import lamina` leaves malloc alone. Each case runs in a fresh process, since
malloc's settings are per process and last for its life."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lamina import allocator

pytestmark = pytest.mark.skipif(not allocator.on_glibc(), reason="glibc's malloc only")

# An eager step in miniature: ten 4 MiB arrays made and touched, then all freed at once.
# Prints the page faults per step after two warm-up steps.
STEPS = """
import resource, sys
if sys.argv[1] == "lamina":
    import os
    import lamina
    if os.environ.get("LAMINA_TUNE"):
        lamina.runtime.tune_process()
import numpy as np

def step():
    held = [np.ones(1 << 20, np.float32) for _ in range(10)]
    del held

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

step(); step()
before = faults()
for _ in range(10):
    step()
print((faults() - before) / 10)
"""


def python(code: str, *args: str, **env: str) -> str:
    """Run code in a fresh interpreter with no malloc setting but those in env."""
    clean = {k: v for k, v in os.environ.items()
             if k not in allocator.USER_SETTINGS and k != "GLIBC_TUNABLES"}
    return subprocess.run([sys.executable, "-c", code, *args], env={**clean, **env},
                          capture_output=True, text=True, check=True).stdout.strip()


def faults_per_step(importing: str, **env: str) -> float:
    return float(python(STEPS, importing, **env))


@pytest.fixture(scope="module")
def baseline() -> float:
    """Faults per step with NumPy alone. 40 MiB freed at once is over glibc's moving trim
    threshold (8 MiB after 4 MiB blocks), so the heap shrinks and its pages fault back in:
    about 5,100 per step here. Where the kernel backs the heap with huge pages there are
    few faults to save, and nothing to see."""
    faults = faults_per_step("numpy")
    if faults < 1000:
        pytest.skip(f"NumPy alone faults {faults:.0f} times per step here")
    return faults


def test_freed_memory_is_reused_without_page_faults(baseline: float) -> None:
    assert faults_per_step("lamina", LAMINA_TUNE="1") < 50


# The same steps on a second thread, as a split plan's slice runs them: its page faults
# per step after two warm-up steps.
THREAD_STEPS = """
import resource, sys, threading
if sys.argv[1] == "lamina":
    import lamina
    lamina.runtime.tune_process()
import numpy as np

def steps(out):
    def faults():
        return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    for _ in range(2):
        held = [np.ones(1 << 20, np.float32) for _ in range(10)]
        del held
    before = faults()
    for _ in range(10):
        held = [np.ones(1 << 20, np.float32) for _ in range(10)]
        del held
    out.append((faults() - before) / 10)

out = []
worker = threading.Thread(target=steps, args=(out,))
worker.start()
worker.join()
print(out[0])
"""


def test_freed_memory_is_reused_without_page_faults_on_other_threads(baseline: float) -> None:
    # glibc gives a thread an arena of its own, which it empties back to the OS past the
    # trim threshold too; tune_process keeps every thread on the main arena.
    if float(python(THREAD_STEPS, "numpy")) < 1000:
        pytest.skip("a thread's arena keeps its memory here without lamina")
    assert float(python(THREAD_STEPS, "lamina")) < 50


def test_a_malloc_setting_in_the_environment_wins(baseline: float) -> None:
    # The user's own threshold keeps glibc's mmap threshold at 128 KiB, so every 4 MiB
    # array is mapped afresh: lamina left malloc as the user set it.
    assert faults_per_step("lamina", MALLOC_TRIM_THRESHOLD_=str(1 << 30)) > baseline / 2
    code = "import lamina; print(lamina.runtime.tune_process()['malloc'])"
    for env in ({"MALLOC_MMAP_THRESHOLD_": "65536"}, {"MALLOC_ARENA_MAX": "4"},
                {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1000000"},
                {"LAMINA_TUNE_PROCESS": "0"}, {}):
        assert python(code, **env) == str(not env)


def test_a_plain_import_changes_no_malloc_setting(baseline: float) -> None:
    assert faults_per_step("lamina") > baseline / 2


def test_freed_memory_kept_goes_back_to_the_os_when_asked() -> None:
    # 40 MiB made and freed under tune_process stays resident (the heap is kept), until
    # give_back_freed_memory returns it: as a split plan's compile does before its
    # threads allocate arenas of their own.
    code = """
import re
import lamina
import numpy as np
from lamina import allocator

def anon():
    return int(re.search(r"RssAnon:\\s+(\\d+)", open("/proc/self/status").read()).group(1))

lamina.runtime.tune_process()
held = [np.ones(1 << 20, np.float32) for _ in range(10)]
before = anon()
del held
kept = anon()
allocator.give_back_freed_memory()
print(before - kept, kept - anon())
"""
    dropped_on_free, given_back = (int(v) // 1024 for v in python(code).split())
    assert dropped_on_free < 8 and given_back >= 32  # MiB
