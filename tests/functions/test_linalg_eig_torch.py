"""linalg.eig and eigvals against PyTorch: complex eigenpairs of real and complex, batched
matrices (A V = V diag(L), unit-norm columns), the gradients of losses that do not depend on
the eigenvectors' phases, checked against PyTorch and central differences, and the refusal
of losses that do."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

RNG = np.random.default_rng(11)


def _matrix(complex_: bool, shape=(2, 4, 4)) -> np.ndarray:
    a = RNG.standard_normal(shape)
    return a + 1j * RNG.standard_normal(shape) if complex_ else a


def _loss(lib, L, V):
    w = lib.tensor(np.cos(np.arange(L.numel())).reshape(tuple(L.shape)))
    return ((L.real * w).sum() + (L.imag ** 2 * w).sum()
            + ((V.abs() ** 2) * w.unsqueeze(-2)).sum())


@pytest.mark.parametrize("complex_", [False, True])
def test_eig_gives_pytorchs_eigenpairs_and_gradient(complex_) -> None:
    a = _matrix(complex_)
    results = []
    for lib in (torch, lamina):
        x = lib.tensor(a, requires_grad=True)
        L, V = lib.linalg.eig(x)
        _loss(lib, L, V).backward()
        results.append((L.detach().numpy(), V.detach().numpy(), x.grad.numpy(), str(L.dtype)))
    (tL, _, tg, tdtype), (lL, lV, lg, ldtype) = results
    assert ldtype.split(".")[-1] == tdtype.split(".")[-1] == "complex128"
    np.testing.assert_allclose(lL, tL, rtol=1e-10, atol=1e-12)  # LAPACK's order in both
    np.testing.assert_allclose(a @ lV, lV * lL[..., None, :], atol=1e-10)
    np.testing.assert_allclose(np.linalg.norm(lV, axis=-2), 1.0, rtol=1e-12)
    np.testing.assert_allclose(lg, tg, rtol=1e-8, atol=1e-10)


def test_eigvals_gradient_is_the_central_difference_of_its_loss() -> None:
    a = _matrix(False, (4, 4))

    def loss(m):
        values = lamina.linalg.eigvals(lamina.tensor(m))
        return ((values.real * lamina.arange(4.0)).sum() + (values.imag ** 2).sum()).item()

    x = lamina.tensor(a, requires_grad=True)
    values = lamina.linalg.eigvals(x)
    ((values.real * lamina.arange(4.0)).sum() + (values.imag ** 2).sum()).backward()
    numeric = np.zeros_like(a)
    for i in range(a.size):
        step = np.zeros_like(a)
        step.flat[i] = 1e-6
        numeric.flat[i] = (loss(a + step) - loss(a - step)) / 2e-6
    np.testing.assert_allclose(x.grad.numpy(), numeric, rtol=1e-5, atol=1e-6)


def test_eig_of_float32_is_complex64_as_pytorchs() -> None:
    a = _matrix(False, (3, 3)).astype(np.float32)
    L = lamina.linalg.eig(lamina.tensor(a)).eigenvalues
    assert L.dtype == lamina.complex64
    np.testing.assert_allclose(L.numpy(), torch.linalg.eig(torch.tensor(a)).eigenvalues.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_a_loss_on_the_eigenvectors_phase_is_refused_as_pytorchs() -> None:
    rotation = np.array([[0.1, -1.0, 0.2], [1.0, 0.3, 0.0], [0.5, 0.0, 2.0]])  # complex pair
    for lib in (torch, lamina):
        x = lib.tensor(rotation, requires_grad=True)
        with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
            lib.linalg.eig(x).eigenvectors.real.sum().backward()
    with pytest.raises(lamina.ShapeError, match="square"):
        lamina.linalg.eig(lamina.ones(2, 3))
