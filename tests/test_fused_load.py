"""Loading numba's kernels: a process that reads them from disk imports none of numba's
compiler registries (lamina/fused/numba_cache.py); one that compiles them leaves SciPy's
BLAS unloaded (numba would load it for itself, lamina/fused/numba_load.py); and numba code
of the user's that needs either still gets it."""

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
import lamina.fused as fused
kernels = fused.compiled()
x = np.linspace(-2, 2, 1000).astype(np.float32)
y, mask = np.empty_like(x), np.empty(1000, bool)
kernels.relu(x, y, mask)  # a kernel run: numba fully set up
report = {"relu_right": bool((y == np.maximum(x, 0)).all() and (mask == (x > 0)).all()),
          "hits": sum(kernels.relu.stats.cache_hits.values()),
          "registries": "numba.np.arraymath" in sys.modules or "numba.np.npyimpl" in sys.modules,
          "scipy_linalg": "scipy.linalg" in sys.modules,
          "entry_left": "scipy.linalg.cython_blas" in sys.modules}
import numba
@numba.njit
def dot(a, b):
    return np.dot(a, b)
report["dot"] = float(dot(np.arange(3.0), np.ones(3)))
report["scipy_linalg_after_dot"] = "scipy.linalg" in sys.modules
print(json.dumps(report))
"""


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
    for report in (compiled, loaded):  # the user's own numba code compiles, with SciPy's BLAS
        assert report["dot"] == 3.0
        assert report["scipy_linalg_after_dot"] is True


def test_a_process_that_loaded_scipys_blas_keeps_it(tmp_path):
    report = _run("import scipy.linalg\n" + _CHILD, tmp_path)
    assert report["scipy_linalg"] is True and report["dot"] == 3.0 and report["relu_right"]
