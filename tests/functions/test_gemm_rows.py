"""gemm_rows, the product behind linear and matmul by a matrix: every path (a few rows of
x by a transposed weight computed with the operands swapped, the flat GEMM, NumPy's own
matmul), with and without the added row and the output buffer, gives NumPy's product."""

from __future__ import annotations

import numpy as np
import pytest

from lamina.functions._util import SWAP_ROWS, gemm_rows

LO, HI = SWAP_ROWS
# (shape of x): one row, the swap's bounds, just past them, a stack, a strided view.
SHAPES = [(7,), (1, 7), (LO, 7), (HI, 7), (HI + 1, 7), (3, 4, 7), (2, 40, 7)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("add", [False, True])
@pytest.mark.parametrize("into", [False, True])
def test_gemm_rows_is_numpys_product(shape, add, into):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    W = rng.standard_normal((9, 7)).astype(np.float32)  # W.T: the F-contiguous case
    b = rng.standard_normal(9).astype(np.float32) if add else None
    want = x @ W.T + (b if add else 0)
    out = np.full(want.shape, np.nan, np.float32) if into else None
    got = gemm_rows(x, W.T, out=out, add=b)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if into:
        assert np.shares_memory(got, out)
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_gemm_rows_non_contiguous_input_and_mixed_dtypes():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 3, 7))[:, ::2].swapaxes(0, 1)  # (2, 5, 7), strided
    W = rng.standard_normal((4, 7)).astype(np.float32)
    got = gemm_rows(x, W.T, add=np.ones(4, np.float32))
    assert got.dtype == np.float64  # NumPy's promotion, as np.matmul gives it
    np.testing.assert_allclose(got, x @ W.T + 1, rtol=1e-12)
    assert x.shape == (2, 5, 7) and got.shape == (2, 5, 4)


def test_gemm_rows_into_a_transposed_buffer():
    """An output buffer that is not C-contiguous is written through NumPy's matmul."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((6, 7))
    W = rng.standard_normal((9, 7))
    out = np.empty((9, 6)).T
    got = gemm_rows(x, W.T, out=out, add=np.arange(9.0))
    np.testing.assert_allclose(out, x @ W.T + np.arange(9.0), rtol=1e-12)
    assert np.shares_memory(got, out)
