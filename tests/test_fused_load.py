"""Loading numba's kernels: a process that reads them from disk imports none of numba's
compiler registries (lamina/fused/numba_cache.py) and compiles none of numba's runtime
(its functions are read from disk too: lamina/fused/numba_runtime.py); one that compiles
them leaves SciPy's BLAS unloaded (numba would load it for itself, lamina/fused/
numba_load.py); and numba code of the user's that needs either still gets it."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None or importlib.util.find_spec("scipy") is None,
    reason="needs numba and SciPy")

_CHILD = """
import json, os, sys
import numpy as np
from numba.core.runtime import nrtdynmod
compiles = []  # of numba's runtime module in this process
make = nrtdynmod.create_nrt_module
nrtdynmod.create_nrt_module = lambda ctx: compiles.append(1) or make(ctx)
import lamina.fused as fused
kernels = fused.compiled()
x = np.linspace(-2, 2, 1000).astype(np.float32)
y = np.empty_like(x)
kernels.relu(x, y)  # a kernel run: numba fully set up
report = {"relu_right": bool((y == np.maximum(x, 0)).all()),
          "hits": sum(kernels.relu.stats.cache_hits.values()),
          "registries": "numba.np.arraymath" in sys.modules or "numba.np.npyimpl" in sys.modules,
          "scipy_linalg": "scipy.linalg" in sys.modules,
          "entry_left": "scipy.linalg.cython_blas" in sys.modules,
          "runtime_compiled": bool(compiles)}
import numba
@numba.njit
def dot(a, b):
    return np.dot(a, b)
report["dot"] = float(dot(np.arange(3.0), np.ones(3)))
report["scipy_linalg_after_dot"] = "scipy.linalg" in sys.modules
print(json.dumps(report))
"""


def _runtime_files(cache_dir):
    return sorted(cache_dir.rglob("nrt-*.bin"))


def _run(code, cache_dir):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache_dir)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_kernel_compiles_without_scipys_blas_then_loads_without_the_registries(tmp_path):
    compiled = _run(_CHILD, tmp_path)  # an empty cache: the kernel compiles
    assert compiled["hits"] == 0 and compiled["relu_right"]
    assert compiled["registries"] is True
    assert compiled["scipy_linalg"] is False
    assert compiled["entry_left"] is False  # the refusal is undone once numba has loaded
    loaded = _run(_CHILD, tmp_path)  # the same cache: the kernel is read from disk
    assert loaded["hits"] == 1 and loaded["relu_right"]
    assert loaded["registries"] is False
    assert compiled["runtime_compiled"] is True and loaded["runtime_compiled"] is False
    assert len(_runtime_files(tmp_path)) == 1
    for report in (compiled, loaded):  # the user's own numba code compiles, with SciPy's BLAS
        assert report["dot"] == 3.0
        assert report["scipy_linalg_after_dot"] is True


def test_a_process_that_loaded_scipys_blas_keeps_it(tmp_path):
    report = _run("import scipy.linalg\n" + _CHILD, tmp_path)
    assert report["scipy_linalg"] is True and report["dot"] == 3.0 and report["relu_right"]


@pytest.mark.parametrize("damage", ["garbage", "truncated", "another key", "a flipped bit"])
def test_a_runtime_file_that_does_not_match_is_compiled_again_and_replaced(tmp_path, damage):
    _run(_CHILD, tmp_path)
    (path,) = _runtime_files(tmp_path)
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"\x80\x04not a runtime" * 100)
    elif damage == "truncated":
        path.write_bytes(data[:len(data) // 2])
    elif damage == "another key":  # a well-formed file for another numba or CPU
        from lamina.fused.numba_runtime import MAGIC
        at = len(MAGIC) + 8  # the key's first byte, after its length
        path.write_bytes(data[:at] + b"X" + data[at + 1:])
    else:  # in the object code: the digest no longer matches
        at = len(data) // 2
        path.write_bytes(data[:at] + bytes([data[at] ^ 1]) + data[at + 1:])
    report = _run(_CHILD, tmp_path)
    assert report["runtime_compiled"] is True and report["relu_right"]
    assert report["dot"] == 3.0  # the user's numba code links the runtime compiled here
    assert path.read_bytes() == data  # written whole again
    assert _run(_CHILD, tmp_path)["runtime_compiled"] is False


def test_a_change_to_any_kernel_file_makes_every_kernels_code_stale(tmp_path):
    """A kernel has the kernels it calls compiled into it, from whichever file: its code
    on disk is stale once any kernel file changes, not only its own."""
    _run(_CHILD, tmp_path)
    assert _run(_CHILD, tmp_path)["hits"] == 1
    # the same cache, as if another kernel file had been edited since
    edited = ("import lamina.fused.numba_cache as cache\n"
              "cache.kernels_stamp = lambda: (('numba_rows.py', 1, 1),)\n")
    report = _run(edited + _CHILD, tmp_path)
    assert report["hits"] == 0 and report["relu_right"]  # compiled again


def test_the_kernel_files_stamp_follows_every_kernel_file_and_only_those(tmp_path):
    from lamina.fused.numba_cache import kernels_stamp

    def stamp():
        return kernels_stamp.__wrapped__(str(tmp_path))  # not the process's cached one

    for name in ("numba_a.py", "numba_b.py", "other.py"):
        (tmp_path / name).write_text("x = 1\n")
    before = stamp()
    assert [entry[0] for entry in before] == ["numba_a.py", "numba_b.py"]
    (tmp_path / "other.py").write_text("x = 22\n")
    assert stamp() == before
    (tmp_path / "numba_b.py").write_text("x = 22\n")
    assert stamp() != before
