"""lamina.linalg against torch.linalg: norms, inv, solve, svdvals, vecdot and cross give
PyTorch's values and gradients (float64), on matrices and stacks; the gradients also
against central differences; a singular matrix raises a RuntimeError (LinAlgError)."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

RNG = np.random.default_rng(3)
M = RNG.standard_normal((2, 3, 4))
SQ = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)
INF = float("inf")

# (expression on the library `L` and its inputs a, b; the input arrays)
CASES = [
    ("L.linalg.norm(a)", (M,)),
    ("L.linalg.norm(a[0], 'fro')", (M,)),
    ("L.linalg.norm(a[0], 'nuc')", (M,)),
    ("L.linalg.norm(a[0], 2)", (M,)),
    ("L.linalg.norm(a[0], -2)", (M,)),
    ("L.linalg.norm(a[0], 1)", (M,)),
    ("L.linalg.norm(a[0], -1)", (M,)),
    ("L.linalg.norm(a[0], float('inf'))", (M,)),
    ("L.linalg.norm(a[0], float('-inf'))", (M,)),
    ("L.linalg.norm(a, dim=1)", (M,)),
    ("L.linalg.norm(a, 3, dim=-1, keepdim=True)", (M,)),
    ("L.linalg.norm(a[0, 0], 1)", (M,)),
    ("L.linalg.norm(a, dim=(0, 2))", (M,)),
    ("L.linalg.vector_norm(a, float('inf'), dim=(1, 2))", (M,)),
    ("L.linalg.vector_norm(a, 0.5)", (M,)),
    ("L.linalg.matrix_norm(a)", (M,)),
    ("L.linalg.matrix_norm(a, 'nuc', dim=(0, 2), keepdim=True)", (M,)),
    ("L.linalg.matrix_norm(a, 2)", (M,)),
    ("L.linalg.matrix_norm(a, 1, dim=(2, 1))", (M,)),
    ("L.linalg.matrix_norm(a, -float('inf'), keepdim=True)", (M,)),
    ("L.linalg.svdvals(a)", (M,)),
    ("L.linalg.inv(a)", (SQ,)),
    ("L.linalg.inv(a[1])", (SQ,)),
    ("L.linalg.solve(a, b)", (SQ, M[:, :, :2].copy())),
    ("L.linalg.solve(a, b[0])", (SQ, M[:, :, :2].copy())),
    ("L.linalg.solve(a, b[0, :, 0])", (SQ, M)),
    ("L.linalg.solve(a, b[:, :, 0])", (SQ, M)),
    ("L.linalg.solve(a, b[:, :, :3], left=False)", (SQ, M[:, :3].copy())),
    ("L.linalg.vecdot(a, b)", (M, M[::-1].copy())),
    ("L.linalg.det(a)", (SQ,)),
    ("L.linalg.det(a[0] - a[0])", (SQ,)),
    ("L.linalg.det(L.stack([a[0, 0], a[0, 1], a[0, 0]]))", (SQ,)),  # singular, rank 2
    ("L.linalg.slogdet(a).logabsdet", (SQ,)),
    ("L.linalg.slogdet(-a[1]).sign * a[1, 0, 0]", (SQ,)),
    ("L.det(a)", (SQ,)),
    ("a.det()", (SQ,)),
    ("a.logdet()", (SQ,)),
    ("L.logdet(a[0])", (SQ,)),
    ("a.slogdet().logabsdet", (SQ,)),
    ("L.linalg.cross(a[..., :3], b[..., :3])", (M, M[::-1].copy())),
    ("L.linalg.cross(a[:, :, :3], b[:, :, :3], dim=1)", (M, M[::-1].copy())),
]


def _run(lib, source, arrays):
    inputs = [lib.tensor(x, requires_grad=True) for x in arrays]
    out = eval(source, {"L": lib}, dict(zip("ab", inputs)))  # noqa: S307 - our own lines
    return out, inputs


@pytest.mark.parametrize("source, arrays", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_pytorch(source, arrays):
    ours, lins = _run(lm, source, arrays)
    theirs, tins = _run(torch, source, arrays)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    w = RNG.standard_normal(tuple(theirs.shape))
    (ours * lm.tensor(w)).sum().backward()
    (theirs * torch.tensor(w)).sum().backward()
    for a, b in zip(lins, tins):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("source, arrays", [c for c in CASES if "inf" not in c[0]
                                            and "norm(a[0], 1)" not in c[0]
                                            and "norm(a[0], -1)" not in c[0]],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_gradients_match_central_differences(source, arrays):
    def fn(*inputs):
        return eval(source, {"L": lm}, dict(zip("ab", inputs)))  # noqa: S307
    assert lm.gradcheck(fn, [lm.tensor(x) for x in arrays])


def test_a_singular_matrix_raises_pytorchs_error_kind():
    singular = np.ones((3, 3))
    for lib in (lm, torch):
        with pytest.raises(RuntimeError):
            lib.linalg.inv(lib.tensor(singular))
        with pytest.raises(RuntimeError):
            lib.linalg.solve(lib.tensor(singular), lib.tensor(np.ones(3)))
    assert issubclass(lm.linalg.LinAlgError, RuntimeError)
    with pytest.raises(lm.linalg.LinAlgError, match="singular"):
        lm.linalg.inv(lm.tensor(singular))


def test_bad_arguments_say_what_fits():
    with pytest.raises(ValueError, match="ord must be"):
        lm.linalg.matrix_norm(lm.ones(2, 2), "max")
    with pytest.raises(RuntimeError, match="give dim"):
        lm.linalg.norm(lm.ones(2, 2, 2), 1)
    with pytest.raises(ValueError, match="square"):
        lm.linalg.inv(lm.ones(2, 3))
    with pytest.raises(ValueError, match="size 3"):
        lm.linalg.cross(lm.ones(2), lm.ones(2))
