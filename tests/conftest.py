from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import lamina as lm
from lamina import thread_pools

# The shared case tables (layer_cases, op_cases, plan_cases, torch_lines) live here, beside
# the test folders that mirror the package: importable from any of them.
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Ray reads these when first imported, which test modules do at collection: set them
# first, as lamina.distributed.init does, so every test cluster listens on loopback only.
for _var in ("RAY_AUTH_MODE", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_USAGE_STATS_ENABLED"):
    os.environ.setdefault(_var, "disabled" if _var == "RAY_AUTH_MODE" else "0")


@pytest.fixture(autouse=True)
def _seed() -> None:
    """Every test starts from the same generator state, so results repeat."""
    lm.manual_seed(0)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture
def quiet_pools(monkeypatch):
    """What lamina.runtime.tune_process sets, for this test: the threaded steps' condition."""
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", thread_pools.BLAS_THREAD_TIMEOUT)
    monkeypatch.setenv("GOMP_SPINCOUNT", thread_pools.OMP_SPIN)
    before = lm.get_num_threads()
    yield
    lm.set_num_threads(before)
