"""grid_sample against PyTorch: every mode, padding mode and align_corners, points inside
and outside the image; values, the image's gradient and the grid's; and central
differences for the modes differentiable in the grid."""

from __future__ import annotations

import numpy as np
import pytest

import lamina
import lamina.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
def test_grid_sample_is_pytorchs(mode, padding_mode, align_corners) -> None:
    rng = np.random.default_rng(0)
    x, grid = rng.standard_normal((2, 3, 6, 5)), rng.uniform(-1.3, 1.3, (2, 4, 7, 2))
    kw = {"mode": mode, "padding_mode": padding_mode, "align_corners": align_corners}
    tx, tg = torch.tensor(x, requires_grad=True), torch.tensor(grid, requires_grad=True)
    lx, lg = lamina.tensor(x, requires_grad=True), lamina.tensor(grid, requires_grad=True)
    theirs = torch.nn.functional.grid_sample(tx, tg, **kw)
    ours = F.grid_sample(lx, lg, **kw)
    g = rng.standard_normal(tuple(theirs.shape))
    (theirs * torch.tensor(g)).sum().backward()
    (ours * lamina.tensor(g)).sum().backward()
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), atol=1e-12)
    grid_grad = np.zeros_like(grid) if lg.grad is None else lg.grad.numpy()
    np.testing.assert_allclose(grid_grad, tg.grad.numpy(), atol=1e-11)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_grid_sample_gradients_match_central_differences(mode, padding_mode) -> None:
    rng = np.random.default_rng(1)
    x = lamina.tensor(rng.standard_normal((1, 2, 5, 4)), requires_grad=True)
    # points off the pixel grid and the image's edges, where the pieces of the kernel meet
    grid = lamina.tensor(rng.uniform(-0.9, 0.9, (1, 3, 2, 2)), requires_grad=True)
    assert lamina.autograd.gradcheck(
        lambda a, b: F.grid_sample(a, b, mode=mode, padding_mode=padding_mode,
                                   align_corners=False), (x, grid))


def test_an_unknown_mode_is_named() -> None:
    with pytest.raises(ValueError, match="grid_sample: mode must be 'bilinear', 'nearest' or "
                       "'bicubic'; got 'cubic'"):
        F.grid_sample(lamina.ones(1, 1, 2, 2), lamina.zeros(1, 1, 1, 2), mode="cubic")
