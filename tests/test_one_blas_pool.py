"""NumPy's OpenBLAS on one thread once lamina runs work on GNU OpenMP's pool, in a process
lamina.runtime.tune_process tuned (lamina/thread_pools.py, blas_beside_openmp): two pools'
spinning threads on the same cores stall each other. Each case in a fresh process, whose
thread pools are its own."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from lamina import thread_pools
from lamina.fused import mkl_blas

pytestmark = pytest.mark.skipif(importlib.util.find_spec("threadpoolctl") is None,
                                reason="threadpoolctl is not installed (lamina[train])")

REPORT = ("from threadpoolctl import threadpool_info\n"
          "def openblas():\n"
          "    return [i['num_threads'] for i in threadpool_info()"
          " if i['internal_api'] == 'openblas']\n")


def _run(body: str, unset: tuple[str, ...] = (), **env: str) -> list:
    """body's last printed line, as JSON, from a fresh process with env's variables and
    without those in `unset`."""
    code = REPORT + "import json, numpy as np, lamina as lm\n" + body
    base = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "GOMP_SPINCOUNT": thread_pools.OMP_SPIN,
            "OPENBLAS_THREAD_TIMEOUT": thread_pools.BLAS_THREAD_TIMEOUT}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**{k: v for k, v in base.items() if k not in unset},
                                           **env})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


MKL_PRODUCT = ("from lamina.fused import mkl_blas\n"
               "a = np.ones((300, 300), np.float32)\n"
               "before = openblas(); mkl_blas.matmul(a, a)\n")


@pytest.mark.skipif(mkl_blas.backend() != "mkl",
                    reason="MKL is not installed or the CPU is not Intel's")
def test_openblas_takes_one_thread_from_the_first_mkl_product():
    before, after, kept = _run(
        "lm.runtime.tune_process()\n" + MKL_PRODUCT
        + "from lamina import thread_pools\n"
        "with thread_pools.blas_single_threaded(): pass\n"  # restores what it found, then
        "print(json.dumps([before, openblas(), openblas()]))")  # lamina pins it again
    assert before == [2] and after == [1] and kept == [1]


@pytest.mark.skipif(mkl_blas.backend() != "mkl",
                    reason="MKL is not installed or the CPU is not Intel's")
def test_a_pool_started_inside_a_single_threaded_block_is_pinned_at_its_end_once():
    """The block's end restores OpenBLAS's count from before it, then lamina sets one
    thread; a count the user sets after that stands through later blocks."""
    inside, after, users = _run(
        "lm.runtime.tune_process()\n"
        "from lamina import thread_pools\n"
        "from lamina.fused import mkl_blas\n"
        "from threadpoolctl import threadpool_limits\n"
        "a = np.ones((300, 300), np.float32)\n"
        "with thread_pools.blas_single_threaded():\n"
        "    mkl_blas.matmul(a, a); inside = openblas()\n"
        "after = openblas()\n"
        "with threadpool_limits(2, user_api='blas'):\n"
        "    with thread_pools.blas_single_threaded(): pass\n"
        "    users = openblas()\n"
        "print(json.dumps([inside, after, users]))")
    assert inside == [1] and after == [1] and users == [2]


@pytest.mark.skipif(mkl_blas.backend() != "mkl",
                    reason="MKL is not installed or the CPU is not Intel's")
def test_tune_process_after_the_first_mkl_product_takes_openblas_to_one_thread():
    before, after = _run(MKL_PRODUCT + "lm.runtime.tune_process()\n"
                         "print(json.dumps([before, openblas()]))")
    assert before == [2] and after == [1]


@pytest.mark.skipif(mkl_blas.backend() != "mkl",
                    reason="MKL is not installed or the CPU is not Intel's")
def test_an_untuned_process_keeps_its_openblas_threads():
    """Without tune_process (a plain `import lamina`), nothing process-wide changes."""
    before, after = _run(MKL_PRODUCT + "print(json.dumps([before, openblas()]))")
    assert before == after == [2]


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_the_threaded_recurrence_also_takes_openblas_to_one_thread():
    """A batch-1 LSTM's threaded steps run on OpenMP's pool (numba's), no MKL needed."""
    parts, after = _run(
        "import lamina.fused as f\n"
        "lm.runtime.tune_process(); lm.set_num_threads(2)\n"
        "lstm = lm.nn.LSTM(8, 16); lstm.eval()\n"
        "with lm.no_grad(): lstm(lm.tensor(np.ones((5, 1, 8), np.float32)))\n"
        "print(json.dumps([f.threaded_parts(), openblas()]))", LAMINA_BLAS="numpy")
    if parts != 2:
        pytest.skip("numba's thread pool is not OpenMP here")
    assert after == [1]


PINNED = ("import lamina.fused as f\n"
          "lm.runtime.tune_process(); lm.set_num_threads(2)\n"
          "lstm = lm.nn.LSTM(8, 16); lstm.eval()\n"
          "with lm.no_grad(): lstm(lm.tensor(np.ones((5, 1, 8), np.float32)))\n"
          "from lamina import thread_pools\n"
          "from lamina.fused import mkl_blas\n"
          "product = np.matmul\n"
          "seen = []\n"
          "def spy(*args, **kwargs):\n"  # the product itself still runs, as NumPy's
          "    seen.append(openblas()[0])\n"
          "    return product(*args, **kwargs)\n"
          "np.matmul = spy\n")


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_a_large_product_mkl_does_not_run_takes_all_of_openblas_threads_back():
    """Pinned beside OpenMP's pool with no MKL to run the products there, OpenBLAS runs a
    large product on every thread (one core of two ran it at half speed), a small one on
    one, and is pinned again after; inside a split's share (a single-threaded block) the
    large one stays on one thread."""
    parts, seen, after, held, a_large = _run(
        PINNED
        + "big = np.ones((256, 256), np.float32); small = np.ones((8, 8), np.float32)\n"
        "out = mkl_blas.matmul(big, big); mkl_blas.matmul(small, small)\n"
        "after = openblas()[0]\n"
        "with thread_pools.blas_single_threaded(): mkl_blas.matmul(big, big)\n"
        "print(json.dumps([f.threaded_parts(), seen, after, openblas()[0],"
        " float(out[0, 0])]))", LAMINA_BLAS="numpy")
    if parts != 2:
        pytest.skip("numba's thread pool is not OpenMP here")
    assert seen == [2, 1, 1] and after == 1 and held == 1
    assert a_large == 256.0


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_a_count_the_user_sets_after_the_pin_stands_through_a_large_product():
    parts, seen, after = _run(
        PINNED + "from threadpoolctl import threadpool_limits\n"
        "threadpool_limits(3, user_api='blas')\n"
        "big = np.ones((256, 256), np.float32); mkl_blas.matmul(big, big)\n"
        "print(json.dumps([f.threaded_parts(), seen, openblas()[0]]))", LAMINA_BLAS="numpy")
    if parts != 2:
        pytest.skip("numba's thread pool is not OpenMP here")
    assert seen == [3] and after == 3


def test_all_blas_threads_changes_nothing_in_an_untuned_process():
    inside, after = _run("from lamina import thread_pools\n"
                         "print(json.dumps([thread_pools.all_blas_threads(openblas), openblas()]))")
    assert inside == after == [2]


def _tuned_spin(**env: str) -> list:
    """In a fresh process with no GOMP_SPINCOUNT of its own: what mkl_blas.would_run
    says, the spin tune_process sets, and the backend the first product then runs on."""
    return _run("import os\nfrom lamina.fused import mkl_blas\n"
                "would = mkl_blas.would_run(); lm.runtime.tune_process()\n"
                "a = np.ones((300, 300), np.float32); mkl_blas.matmul(a, a)\n"
                "print(json.dumps([would, os.environ['GOMP_SPINCOUNT'], mkl_blas.backend()]))",
                unset=("GOMP_SPINCOUNT", "LAMINA_BLAS"), **env)


def test_openmp_spins_briefly_where_openblas_runs_the_products():
    """LAMINA_BLAS=numpy on any machine: OpenBLAS's threads run the large products, and
    OpenMP's idle threads must not hold their cores (lamina/thread_pools.py)."""
    assert _tuned_spin(LAMINA_BLAS="numpy") == [False, thread_pools.OMP_SPIN_BESIDE_OPENBLAS,
                                                "numpy"]


def test_the_spin_follows_the_backend_the_products_run_on():
    """would_run, which loads nothing, foretells the backend; MKL's products share
    OpenMP's pool and keep its long spin."""
    would, spin, backend = _tuned_spin()
    assert would == (backend == "mkl")
    assert spin == (thread_pools.OMP_SPIN if backend == "mkl"
                    else thread_pools.OMP_SPIN_BESIDE_OPENBLAS)
