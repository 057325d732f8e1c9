"""F.linear over an input whose rows are stored in another order than its axes read (a
batch-first view of a time-major output): its products run over the rows as stored, the
output and the input's gradient take the input's layout. Values and gradients against
PyTorch on the same views, and against float64 central differences."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lamina as lm
import lamina.functions as F
from lamina.functions.connection import Linear


def _view(shape, axes, seed=0, dtype=np.float32):
    """A contiguous array of `shape`, and its view with `axes` permuted."""
    base = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return base, base.transpose(axes)


@pytest.mark.parametrize("shape, axes, out", [
    ((5, 3, 8), (1, 0, 2), 4),  # (T, B, K) read batch-first, a narrower output
    ((5, 3, 8), (1, 0, 2), 8),  # as wide
    ((2, 5, 3, 8), (2, 0, 1, 3), 6),  # four axes
    ((5, 3, 8), (1, 0, 2), 12),  # wider: the products run over the rows in order
    ((5, 8, 3), (0, 2, 1), 4),  # features not last in memory: in order too
])
@pytest.mark.parametrize("bias", [True, False])
def test_matches_pytorch_on_the_same_view(shape, axes, out, bias) -> None:
    base, _ = _view(shape, axes)
    rng = np.random.default_rng(1)
    W = rng.standard_normal((out, shape[axes[-1]])).astype(np.float32)
    b = rng.standard_normal(out).astype(np.float32) if bias else None
    xb = lm.tensor(base, requires_grad=True)
    Wl, bl = lm.tensor(W, requires_grad=True), None if b is None else lm.tensor(b, requires_grad=True)
    y = F.linear(xb.permute(*axes), Wl, bl)
    g = rng.standard_normal(y.shape).astype(np.float32)
    (y * lm.tensor(g)).sum().backward()

    xt = torch.tensor(base, requires_grad=True)
    Wt = torch.tensor(W, requires_grad=True)
    bt = None if b is None else torch.tensor(b, requires_grad=True)
    yt = torch.nn.functional.linear(xt.permute(*axes), Wt, bt)
    (yt * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    for mine, theirs in [(xb, xt), (Wl, Wt), (bl, bt)]:
        if mine is not None:
            np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-4,
                                       atol=1e-4)


def test_output_and_input_gradient_take_the_inputs_layout() -> None:
    """A (T, B, K) array read (B, T, K): the output is (B, T, N) stored (T, B, N), and
    the input's gradient, which the transpose hands back to the time-major array, is
    stored (T, B, K) as well: contiguous once turned back."""
    _, view = _view((6, 4, 16), (1, 0, 2))
    W = np.random.default_rng(2).standard_normal((5, 16)).astype(np.float32)
    op = Linear()
    y = op.apply(lm.tensor(view, requires_grad=True), lm.tensor(W, requires_grad=True))
    assert np.transpose(y.array, (1, 0, 2)).flags.c_contiguous
    gx, gW = op.backward(np.ones(y.shape, np.float32))
    assert np.transpose(gx, (1, 0, 2)).flags.c_contiguous


def test_a_wider_output_stays_in_order() -> None:
    """An output wider than the input (an LSTM's x-gates) is laid out in its axes' order:
    the op that reads it (the recurrence) takes it without a copy."""
    _, view = _view((6, 4, 8), (1, 0, 2))
    W = lm.tensor(np.ones((32, 8), np.float32))
    assert F.linear(lm.tensor(view), W).array.flags.c_contiguous


def test_gradients_match_central_differences() -> None:
    base, _ = _view((4, 3, 5), (1, 0, 2), dtype=np.float64)
    rng = np.random.default_rng(3)
    inputs = [lm.tensor(base, requires_grad=True),
              lm.tensor(rng.standard_normal((3, 5)), requires_grad=True),
              lm.tensor(rng.standard_normal(3), requires_grad=True)]
    assert lm.gradcheck(lambda x, w, b: F.linear(x.transpose(0, 1), w, b), inputs)
