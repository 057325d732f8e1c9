"""What ops keep between forward and backward: the least memory that gives the same
gradients. A ReLU keeps its output, as PyTorch's does (and so refuses, as PyTorch does,
a backward after that output was changed in place); a convolution keeps its input where
its window matrix would be larger and the layer is wide, and makes the window matrix
again in backward."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import lamina as lm
import lamina.nn.functional as F
from lamina import fused
from lamina.functions.conv import Conv


def _x(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("size", [100, 8192])  # NumPy's pass, and numba's where loaded
def test_relu_keeps_its_output_and_no_mask(size: int) -> None:
    fused.compiled()
    x = lm.tensor(_x((size,)), requires_grad=True)
    y = F.relu(x)
    (kept,) = y.creator.saved_tensors
    assert kept.dtype == np.float32 and np.shares_memory(kept, y.array)
    gy = _x((size,), 1)
    y.backward(lm.tensor(gy))
    np.testing.assert_array_equal(x.grad.array, np.where(x.array > 0, gy, 0))


def test_relu_output_changed_in_place_fails_backward_as_in_pytorch() -> None:
    for mod in (torch, lm):
        x = mod.tensor(_x((5000,)), requires_grad=True)
        y = mod.relu(x)
        y.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


CASES = [  # (channels in, out, kernel, stride, padding, input size): what backward keeps
    (8, 128, 3, 2, 1, 12, "x"),  # a window matrix 2.25 times x
    (3, 128, 3, 1, 1, 10, "x"),  # nine times (too few channels for Winograd's product)
    (8, 128, (3, 1), 1, (1, 0), 12, "x"),
    (8, 128, 1, 2, 0, 12, "window"),  # a quarter of x
    (8, 64, 3, 2, 1, 12, "window"),  # too few output channels to make it again
]


@pytest.mark.parametrize(("cin", "cout", "k", "s", "p", "hw", "keeps"), CASES)
@pytest.mark.parametrize("compiled", [False, True], ids=["numpy", "numba"])
def test_conv_keeps_the_smaller_of_input_and_window_matrix_same_gradients(
        cin, cout, k, s, p, hw, keeps, compiled, monkeypatch) -> None:
    if compiled:
        fused.compiled()
        monkeypatch.setattr(fused, "compiled_for", lambda *a: fused.compiled())
    else:
        monkeypatch.setattr(fused, "compiled_for", lambda *a: None)
    x0, gy = _x((4, cin, hw, hw)), None
    w0 = _x((cout, cin, *((k, k) if isinstance(k, int) else k)), 1)

    def run() -> tuple[list[np.ndarray], tuple]:
        x = lm.tensor(x0, requires_grad=True)
        w = lm.tensor(w0, requires_grad=True)
        y = F.conv2d(x, w, stride=s, padding=p)
        saved = y.creator.saved_tensors
        nonlocal gy
        gy = _x(tuple(y.shape), 2) if gy is None else gy
        y.backward(lm.tensor(gy))
        return [x.grad.array, w.grad.array], saved

    grads, (col, _, kept_x) = run()
    if keeps == "x":
        assert col is None and kept_x is not None
    else:
        assert col is not None and kept_x is None
    # The window matrix kept, as before: the same bits
    monkeypatch.setattr(Conv, "kept_window", lambda self, col, x, W: col)
    before, (col, _, _) = run()
    assert col is not None
    for a, b in zip(grads, before):
        np.testing.assert_array_equal(a, b)


def test_conv_keeping_its_input_matches_pytorch() -> None:
    x0, w0 = _x((2, 6, 9, 9)), _x((128, 6, 3, 3), 1)
    x, w = lm.tensor(x0, requires_grad=True), lm.tensor(w0, requires_grad=True)
    tx, tw = torch.tensor(x0, requires_grad=True), torch.tensor(w0, requires_grad=True)
    y = F.conv2d(x, w, stride=2, padding=1)
    assert y.creator.saved_tensors[0] is None  # no window matrix kept
    ty = torch.nn.functional.conv2d(tx, tw, stride=2, padding=1)
    (y * y).sum().backward()
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.array, ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.array, tx.grad.numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w.grad.array, tw.grad.numpy(), rtol=1e-4, atol=1e-4)
