"""Products through MKL (lamina/fused/mkl_blas.py) equal NumPy's to float32 rounding in
every layout they take, fall back to NumPy's for what they do not, keep `out` semantics,
run on one thread inside lamina's own threads and in a forked child, and load nothing at
`import lamina`."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys

import numpy as np
import pytest
from sgd_cases import assert_axpby_is_the_update

from lamina import parallel, thread_pools
from lamina.fused import mkl_blas
from lamina.fused.blas_layout import layout

mkl_only = pytest.mark.skipif(mkl_blas.backend() != "mkl",
                              reason="MKL is not installed or the CPU is not Intel's")
RNG = np.random.default_rng(0)


def _exact(a, b):
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def _close(got, a, b):
    want = _exact(a, b)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)  # error bound's size
    tol = 1e-6 if got.dtype == np.float64 else 1e-5
    assert got.shape == want.shape
    np.testing.assert_array_less(np.abs(got - want), tol * scale + 1e-30)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, k, n", [(130, 257, 190), (1, 64, 48)])  # and a batch-1 layer's
def test_every_layout_of_two_matrices(ta, tb, dtype, m, k, n):
    a = RNG.standard_normal((k, m) if ta else (m, k)).astype(dtype)
    b = RNG.standard_normal((n, k) if tb else (k, n)).astype(dtype)
    a, b = (a.T if ta else a), (b.T if tb else b)
    got = mkl_blas.matmul(a, b)
    assert got.dtype == dtype and got.flags.c_contiguous
    _close(got, a, b)


def test_row_padded_views_and_out():
    base = RNG.standard_normal((200, 300)).astype(np.float32)
    a, b = base[:150, :256], RNG.standard_normal((256, 120)).astype(np.float32)
    out = np.full((160, 130), 7.0, np.float32)
    got = mkl_blas.matmul(a, b, out=out[:150, :120])
    assert np.shares_memory(got, out)
    _close(out[:150, :120], a, b)
    assert (out[150:] == 7).all() and (out[:, 120:] == 7).all()  # nothing written past it


def test_stacks_of_one_stride_and_of_several():
    a = RNG.standard_normal((16, 64, 96)).astype(np.float32)
    b = RNG.standard_normal((16, 96, 128)).astype(np.float32)
    _close(mkl_blas.matmul(a, b), a, b)
    _close(mkl_blas.matmul(a, b.transpose(0, 2, 1).copy().transpose(0, 2, 1)), a, b)
    # Attention's heads read through a transposed view: no one stride walks the stack,
    # so MKL takes it by the matrices' addresses.
    qkv = RNG.standard_normal((4, 128, 3, 6, 64)).astype(np.float32)
    q, k = qkv[:, :, 0].transpose(0, 2, 1, 3), qkv[:, :, 1].transpose(0, 2, 3, 1)
    assert layout(q)[2] is None and layout(k)[2] is None
    _close(mkl_blas.matmul(q, k), q, k)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stacks_by_address_in_every_form_numpy_takes(dtype, monkeypatch):
    """Stacks walked by several strides, by none (a broadcast view), backwards, and
    transposed matrices in them: each product equals NumPy's, every matrix in its place."""
    listed = []
    by_address = mkl_blas._listed
    monkeypatch.setattr(mkl_blas, "_listed", lambda *a: listed.append(by_address(*a)))
    base = RNG.standard_normal((3, 5, 70, 80)).astype(dtype)
    other = RNG.standard_normal((5, 3, 80, 90)).astype(dtype)
    cases = [
        (base, other.transpose(1, 0, 2, 3)),  # several strides
        (base[::-1, ::-1], other.transpose(1, 0, 2, 3)[:, ::-1]),  # backwards
        (np.broadcast_to(base[:1], base.shape), other.transpose(1, 0, 2, 3)),  # stride 0
        (base.transpose(0, 1, 3, 2)[..., :60].swapaxes(-1, -2),
         other.transpose(1, 0, 3, 2).swapaxes(-1, -2)),  # transposed matrices
    ]
    for a, b in cases:
        got = mkl_blas.matmul(a, b)
        assert got.flags.c_contiguous and got.dtype == dtype
        _close(got, a, b)
    assert len(listed) == (len(cases) if mkl_blas.backend() == "mkl" else 0)


@pytest.mark.parametrize("right_transposed", [False, True])
def test_small_stacks_by_address_go_to_mkl_with_a_transposed_right_operand(
        right_transposed, monkeypatch):
    """A small transformer's heads (50 x 32 x 50 a product): q @ k^T by address on MKL,
    weights @ values on NumPy's BLAS (MIN_LISTED)."""
    listed = []
    by_address = mkl_blas._listed
    monkeypatch.setattr(mkl_blas, "_listed", lambda *a: listed.append(by_address(*a)))
    qkv = RNG.standard_normal((32, 50, 3, 4, 32)).astype(np.float32)
    q, k = qkv[:, :, 0].transpose(0, 2, 1, 3), qkv[:, :, 1].transpose(0, 2, 1, 3)
    weights = RNG.random((32, 4, 50, 50)).astype(np.float32)
    a, b = (q, k.swapaxes(-1, -2)) if right_transposed else (weights, k)
    _close(mkl_blas.matmul(a, b), a, b)
    assert len(listed) == (right_transposed and mkl_blas.backend() == "mkl")


def test_an_out_no_one_stride_walks_is_numpys_to_fill():
    """Such an `out` might hold matrices that overlap: NumPy's matmul writes it."""
    a = RNG.standard_normal((4, 6, 128, 64)).astype(np.float32)
    b = RNG.standard_normal((4, 6, 64, 64)).astype(np.float32)
    out = np.zeros((4, 128, 6, 64), np.float32).transpose(0, 2, 1, 3)
    got = mkl_blas.matmul(a, b, out=out)
    assert np.shares_memory(got, out)
    _close(out, a, b)


@mkl_only
def test_a_product_reading_a_large_operand_goes_to_mkl_whatever_its_work():
    """A batch-1 layer's product (1 x 784 by 784 x 1024: 0.8M multiply-adds, under
    MIN_WORK) reads 3 MB of weights: MKL's, on both cores. Products as small in both
    work and operands stay NumPy's."""
    x = RNG.standard_normal((1, 784)).astype(np.float32)
    W = RNG.standard_normal((1024, 784)).astype(np.float32)
    assert x.size * 1024 < mkl_blas.MIN_WORK and W.size >= mkl_blas.MIN_OPERAND
    assert mkl_blas._product_shape(x, W.T) == (1, 1024)
    _close(mkl_blas.matmul(x, W.T), x, W.T)
    few = RNG.standard_normal((4, 512)).astype(np.float32)
    assert mkl_blas._product_shape(few, W[:128, :512].T) is None  # 262k, 64k-element operands


def test_what_it_does_not_take_is_numpys():
    small = RNG.standard_normal((8, 8)).astype(np.float32)
    assert (mkl_blas.matmul(small, small) == small @ small).all()  # below MIN_WORK
    ints = RNG.integers(-5, 5, (300, 300))
    assert (mkl_blas.matmul(ints, ints) == ints @ ints).all()
    mixed = RNG.standard_normal((300, 300))
    _close(mkl_blas.matmul(mixed.astype(np.float32), mixed), mixed.astype(np.float32), mixed)
    wide = RNG.standard_normal((300, 300)).astype(np.float32)
    broadcast = RNG.standard_normal((3, 300, 300)).astype(np.float32)
    assert mkl_blas.matmul(wide, broadcast).shape == (3, 300, 300)
    assert mkl_blas.matmul(np.ones((300, 0), np.float32), np.ones((0, 300), np.float32)
                           ).sum() == 0
    with pytest.raises(ValueError):
        mkl_blas.matmul(wide, RNG.standard_normal((299, 300)).astype(np.float32))


def test_out_overlapping_an_operand_gives_numpys_answer():
    a = RNG.standard_normal((300, 300)).astype(np.float32)
    want = a @ a
    got = mkl_blas.matmul(a, a.copy(), out=a)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@mkl_only
def test_inside_lamina_threads_each_product_is_right():
    """In run_all's tasks MKL runs on one thread each (two products side by side)."""
    pairs = [(RNG.standard_normal((256, 512)).astype(np.float32),
              RNG.standard_normal((512, 384)).astype(np.float32)) for _ in range(2)]
    with thread_pools.blas_single_threaded():
        outs = parallel.run_all([lambda p=p: mkl_blas.matmul(*p) for p in pairs])
    for out, (a, b) in zip(outs, pairs):
        _close(out, a, b)


def _child_product(queue):
    a = np.arange(512 * 512, dtype=np.float32).reshape(512, 512) % 7
    queue.put(float(mkl_blas.matmul(a, a).sum()))


@mkl_only
def test_a_forked_child_runs_its_products():
    """GNU OpenMP's pool does not survive a fork: the child runs MKL on one thread."""
    a = np.arange(512 * 512, dtype=np.float32).reshape(512, 512) % 7
    want = float(mkl_blas.matmul(a, a).sum())  # the parent's pool has started
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_product, args=(queue,))
    child.start()
    child.join(60)
    assert child.exitcode == 0, "the forked child hung or died in its product"
    assert queue.get(timeout=5) == want


def _python(code, **env):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, **env})
    return out


def test_import_loads_no_mkl_and_the_environment_chooses():
    code = ("import json, lamina, numpy as np\n"
            "loaded = lambda: any('mkl_rt' in l for l in open('/proc/self/maps'))\n"
            "before = loaded()\n"
            "from lamina.fused import mkl_blas\n"
            "a = np.ones((300, 300), np.float32); mkl_blas.matmul(a, a)\n"
            "print(json.dumps([before, mkl_blas.backend(), loaded()]))")
    before, backend, after = json.loads(_python(code, LAMINA_BLAS="numpy").stdout)
    assert before is False and backend == "numpy" and after is False
    bad = _python(code, LAMINA_BLAS="openblas")
    assert bad.returncode != 0 and "LAMINA_BLAS must be one of" in bad.stderr


@mkl_only
def test_numba_keeps_openmp_beside_mkls_tbb():
    """MKL's wheel brings TBB, numba's first choice: lamina's threaded kernels need OpenMP."""
    pytest.importorskip("numba")
    code = ("import numpy as np, lamina\n"
            "from lamina import fused\n"
            "fused.compiled()\n"
            "from lamina.fused import numba_threaded\n"
            "numba_threaded.transposed(np.ones((64, 64), np.float32), 2)\n"
            "import numba; print(numba.threading_layer())")
    assert _python(code).stdout.strip() == "omp"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axpby_is_one_update_whatever_its_range(dtype):
    """y = a * x + b * y to rounding, and each element's bits the same wherever a range
    starts or ends, on one thread or several: SGD's pieces give one thread's result."""
    if mkl_blas.backend() != "mkl":
        assert mkl_blas.axpby(0.5, np.ones(4, dtype), 2.0, np.ones(4, dtype)) is False
        return
    n = 300_007
    x, y0, whole = assert_axpby_is_the_update(mkl_blas.axpby, dtype, n)
    for lo, hi in [(0, 1), (3, 20), (13, 70_001), (65_537, n)]:
        part = y0[lo:hi].copy()
        mkl_blas.axpby(0.7, x[lo:hi], -0.9, part)
        np.testing.assert_array_equal(part, whole[lo:hi])
    shared = y0.copy()
    cut = n // 3
    parallel.run_all([lambda: mkl_blas.axpby(0.7, x[:cut], -0.9, shared[:cut]),
                      lambda: mkl_blas.axpby(0.7, x[cut:], -0.9, shared[cut:])])
    np.testing.assert_array_equal(shared, whole)


def test_axpby_declines_what_it_does_not_take():
    """Strided, mixed or read-only arrays: it writes nothing and says so."""
    x = np.ones(64, np.float32)
    cases = [(x[::2], np.ones(32, np.float32)), (x, np.ones(64)),
             (x, np.ones(63, np.float32)), (x.astype(np.int32), np.ones(64, np.int32))]
    frozen = np.ones(64, np.float32)
    frozen.flags.writeable = False
    cases.append((x, frozen))
    for a, y in cases:
        before = y.copy()
        assert mkl_blas.axpby(2.0, a, 3.0, y) is False
        np.testing.assert_array_equal(y, before)


def test_axpby_loads_no_mkl():
    """An update alone is not worth MKL's load: only a product loads it."""
    code = ("import json, numpy as np\n"
            "from lamina.fused import mkl_blas\n"
            "y = np.ones(8, np.float32)\n"
            "ran = mkl_blas.axpby(2.0, np.ones(8, np.float32), 1.0, y)\n"
            "print(json.dumps([ran, any('mkl_rt' in l for l in open('/proc/self/maps')),"
            " float(y[0])]))")
    assert json.loads(_python(code).stdout) == [False, False, 1.0]
