"""Loading numba's kernels leaves SciPy's BLAS unloaded (numba would load it for itself,
lamina/fused/numba_load.py), and numba code that needs it still gets it."""

from __future__ import annotations

import importlib.util
import json
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
x = np.ones(1000, np.float32)
kernels.relu(x, np.empty_like(x), np.empty(1000, bool))  # a kernel run: numba fully set up
report = {"scipy_linalg": "scipy.linalg" in sys.modules,
          "entry_left": "scipy.linalg.cython_blas" in sys.modules}
import numba
@numba.njit
def dot(a, b):
    return np.dot(a, b)
report["dot"] = float(dot(np.arange(3.0), np.ones(3)))
report["scipy_linalg_after_dot"] = "scipy.linalg" in sys.modules
print(json.dumps(report))
"""


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kernels_load_without_scipys_blas_and_numba_code_still_gets_it():
    report = _run(_CHILD)
    assert report["scipy_linalg"] is False
    assert report["entry_left"] is False  # the refusal is undone once numba has loaded
    assert report["dot"] == 3.0
    assert report["scipy_linalg_after_dot"] is True


def test_a_process_that_loaded_scipys_blas_keeps_it():
    report = _run("import scipy.linalg\n" + _CHILD)
    assert report["scipy_linalg"] is True and report["dot"] == 3.0
