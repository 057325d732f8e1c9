"""The LU family against PyTorch's: factors, pivots (exactly), P, L, U, solutions in
every orientation, info on singular matrices, the deprecated torch.lu / lu_solve, the
errors; gradients of lu_factor, lu and lu_solve against PyTorch's and against float64
central differences."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")

SHAPES = [(1, 1), (4, 4), (3, 5, 5), (70, 70), (4, 6), (6, 4), (2, 40, 33)]


def _rand(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lu_factor_and_lu_are_pytorch_s(shape, dtype):
    A = _rand(shape).astype(dtype)
    LU, piv = lm.linalg.lu_factor(lm.tensor(A))
    LU_t, piv_t = torch.linalg.lu_factor(torch.tensor(A))
    assert piv.dtype == lm.int32 and piv.shape == tuple(piv_t.shape)
    np.testing.assert_array_equal(piv.numpy(), piv_t.numpy())
    tol = 1e-10 if dtype == np.float64 else 2e-4
    np.testing.assert_allclose(LU.numpy(), LU_t.numpy(), atol=tol, rtol=tol)
    for ours, theirs in zip(lm.linalg.lu(lm.tensor(A)), torch.linalg.lu(torch.tensor(A))):
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=tol, rtol=tol)
    for ours, theirs in zip(lm.lu_unpack(LU, piv, unpack_pivots=False),
                            torch.lu_unpack(LU_t, piv_t, unpack_pivots=False)):
        assert ours.shape == tuple(theirs.shape)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_and_its_gradients_are_pytorch_s(left, adjoint):
    A, B = _rand((2, 4, 4)), _rand((2, 4, 3) if left else (2, 3, 4), seed=1)
    W = _rand((2, 4, 3) if left else (2, 3, 4), seed=2)
    got = []
    for t in (lm, torch):
        a, b = t.tensor(A, requires_grad=True), t.tensor(B, requires_grad=True)
        X = t.linalg.lu_solve(*t.linalg.lu_factor(a), b, left=left, adjoint=adjoint)
        (X * t.tensor(W)).sum().backward()
        got.append((X.detach().numpy(), a.grad.numpy(), b.grad.numpy()))
    for ours, theirs in zip(*got):
        np.testing.assert_allclose(ours, theirs, atol=1e-10, rtol=1e-10)


def test_lu_gradients_match_pytorch_and_central_differences():
    A, W = _rand((3, 5, 5)), [_rand((3, 5, 5), seed=s) for s in (3, 4, 5)]

    def loss(t, a):
        LU, piv = t.linalg.lu_factor(a)
        P, L, U = t.linalg.lu(a)
        return (LU * t.tensor(W[0])).sum() + (L * t.tensor(W[1])).sum() + \
            (U * t.tensor(W[2])).sum()

    grads = []
    for t in (lm, torch):
        a = t.tensor(A, requires_grad=True)
        loss(t, a).backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-9, rtol=1e-9)
    eps, numeric = 1e-6, np.zeros_like(A)
    for i in np.ndindex(A.shape):
        up, down = A.copy(), A.copy()
        up[i] += eps
        down[i] -= eps
        numeric[i] = (loss(lm, lm.tensor(up)).item() - loss(lm, lm.tensor(down)).item()) / (2 * eps)
    np.testing.assert_allclose(grads[0], numeric, atol=1e-6, rtol=1e-6)


def test_singular_matrices_and_info_as_pytorch():
    Z = np.zeros((2, 3, 3))
    Z[1] = np.eye(3)
    ours, theirs = lm.linalg.lu_factor_ex(lm.tensor(Z)), torch.linalg.lu_factor_ex(torch.tensor(Z))
    np.testing.assert_array_equal(ours.info.numpy(), theirs.info.numpy())
    np.testing.assert_array_equal(ours.pivots.numpy(), theirs.pivots.numpy())
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero and using it on lu_solve"):
        lm.linalg.lu_factor(lm.tensor(Z))


def test_deprecated_torch_lu_and_lu_solve_warn_and_answer_as_pytorch_s():
    A, B = _rand((4, 4)), _rand((4, 2), seed=1)
    results = []
    for t in (lm, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            LU, piv, info = t.lu(t.tensor(A), get_infos=True)
            X = t.lu_solve(t.tensor(B), LU, piv)
            Y = t.tensor(B).lu_solve(*t.tensor(A).lu())
        results.append((X.numpy(), Y.numpy(), int(info)))
        assert all(w.category is UserWarning for w in caught)
    np.testing.assert_allclose(results[0][0], results[1][0], atol=1e-10)
    np.testing.assert_allclose(results[0][1], results[1][1], atol=1e-10)
    assert results[0][2] == results[1][2] == 0


def test_errors_name_the_problem_as_pytorch_s():
    for call, match in [
            (lambda t: t.linalg.lu_factor(t.zeros(2)), "Expected tensor with 2 or more"),
            (lambda t: t.linalg.lu_factor(t.eye(2), pivot=False), "without pivoting"),
            (lambda t: t.linalg.lu_solve(*t.linalg.lu_factor(t.tensor(_rand((3, 5)))),
                                         t.ones(3, 1, dtype=t.float64)),
             "must be batches of square matrices"),
            (lambda t: t.linalg.lu_solve(*t.linalg.lu_factor(t.eye(2)), t.ones(3, 1)),
             "Incompatible shapes of A and B")]:
        for t in (lm, torch):
            with pytest.raises(RuntimeError, match=match):
                call(t)
