"""interpolate(antialias=True), bilinear and bicubic, shrinking and growing, with and
without align_corners: PyTorch's values and gradients; gradients by central differences."""

from __future__ import annotations

import numpy as np
import pytest

import lamina
import lamina.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

SIZES = [{"size": (5, 4)}, {"size": (20, 17)}, {"size": (3, 22)}, {"size": (1, 1)},
         {"scale_factor": 0.37}, {"scale_factor": 1.7}]


@pytest.mark.parametrize("kw", SIZES, ids=str)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_antialiased_resampling_is_pytorchs(mode, align_corners, kw, dtype) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 13, 11)).astype(dtype)
    tx, lx = torch.tensor(x, requires_grad=True), lamina.tensor(x, requires_grad=True)
    theirs = torch.nn.functional.interpolate(tx, mode=mode, antialias=True,
                                             align_corners=align_corners, **kw)
    ours = F.interpolate(lx, mode=mode, antialias=True, align_corners=align_corners, **kw)
    g = rng.standard_normal(tuple(theirs.shape)).astype(dtype)
    (theirs * torch.tensor(g)).sum().backward()
    (ours * lamina.tensor(g)).sum().backward()
    tol = 1e-12 if dtype == "float64" else 1e-5
    assert ours.dtype == getattr(lamina, dtype)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=tol)
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), atol=tol * 10)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialiased_gradients_match_central_differences(mode) -> None:
    x = lamina.tensor(np.random.default_rng(1).standard_normal((1, 2, 7, 6)),
                      requires_grad=True)
    assert lamina.autograd.gradcheck(
        lambda t: F.interpolate(t, size=(3, 4), mode=mode, antialias=True), (x,))


@pytest.mark.parametrize("mode", ["nearest", "area", "linear"])
def test_antialias_outside_bilinear_and_bicubic_is_refused_as_in_pytorch(mode) -> None:
    shape = (1, 1, 6) if mode == "linear" else (1, 1, 6, 6)
    with pytest.raises(ValueError):
        torch.nn.functional.interpolate(torch.ones(shape), size=3 if len(shape) == 3
                                        else (3, 3), mode=mode, antialias=True)
    with pytest.raises(ValueError, match="restricted to bilinear and bicubic modes"):
        F.interpolate(lamina.ones(*shape), size=3 if len(shape) == 3 else (3, 3), mode=mode,
                      antialias=True)
