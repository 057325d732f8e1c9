"""A custom Function's outputs that take no gradient (marked, or integer and boolean),
against PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _run(lib):
    seen = []

    class Split(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            doubled, tripled = x * 2, x * 3
            ctx.mark_non_differentiable(tripled)
            return doubled, tripled, x > 0, x.argmax()

        @staticmethod
        def backward(ctx, g, g_tripled, g_positive, g_index):
            seen.append((g_tripled.tolist(), g_positive.tolist(), g_index.tolist()))
            return g * 2

    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    outs = Split.apply(x)
    flags = [(o.requires_grad, o.grad_fn is None) for o in outs]
    (outs[0] * outs[1]).sum().backward()  # the marked output as a constant factor
    return flags, seen, x.grad.numpy()


def test_outputs_that_take_no_gradient_are_pytorchs() -> None:
    ours, theirs = _run(lamina), _run(torch)
    assert ours[0] == theirs[0] == [(True, False), (False, True), (False, True), (False, True)]
    assert ours[1] == theirs[1] == [([0.0, 0.0, 0.0], [False, False, False], 0)]
    np.testing.assert_array_equal(ours[2], theirs[2])
