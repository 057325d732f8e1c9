"""matmul's gradients of a permuted view (attention's heads: a projection's columns
reshaped and transposed) are laid out as that view's memory, so that the transpose and
reshape handing them back are views: the same values as PyTorch's and as float64 central
differences, in that layout."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
from lamina.functions.product import MatMul, memory_order, product_in_order

torch = pytest.importorskip("torch")
B, T, H, D = 2, 5, 3, 4


def _heads(t, qkv):
    """q, k, v (B, H, T, D) as views of qkv (B, T, 3 * H * D): split, reshape, transpose,
    as nn.MultiheadAttention and nanoGPT make them."""
    return [p.reshape(B, T, H, D).transpose(1, 2) for p in qkv.split(H * D, dim=2)]


def _attend(t, qkv, mix):
    q, k, v = _heads(t, qkv)
    return ((q @ k.transpose(-1, -2)) @ v * mix).sum()


def test_memory_order_names_a_permuted_stack_only():
    a = np.zeros((B, T, H, D), np.float32)
    assert memory_order(a.transpose(0, 2, 1, 3)) == [0, 2, 1, 3]
    assert memory_order(a.transpose(0, 2, 3, 1)) == [0, 3, 1, 2]
    assert memory_order(a) is None  # in order already
    assert memory_order(a[0, 0].T) is None  # a matrix: BLAS takes its transpose as it is
    assert memory_order(np.broadcast_to(np.zeros((1, T, D)), (B, T, D))) is None


def test_a_gradient_takes_its_operands_layout():
    rng = np.random.default_rng(0)
    mem = rng.standard_normal((B, T, H, D)).astype(np.float32)
    q = mem.transpose(0, 2, 1, 3)  # (B, H, T, D), laid out (B, T, H, D)
    k = rng.standard_normal((B, H, D, T)).astype(np.float32)
    op = MatMul()
    y = op.apply(lm.tensor(q, requires_grad=True), lm.tensor(k, requires_grad=True))
    gq, gk = op.backward(np.ones(y.shape, np.float32))
    assert gq.transpose(0, 2, 1, 3).flags.c_contiguous  # the layout of q's memory
    assert gk.flags.c_contiguous  # k is contiguous: so is its gradient
    np.testing.assert_allclose(gq, np.ones(y.shape) @ np.swapaxes(k, -1, -2), rtol=1e-5)
    # A broadcast product's gradient is summed to the operand's shape: no layout to keep.
    out = product_in_order(np.ones((B, H, T, T)), np.ones((1, 1, T, D)), (0, 2, 1, 3),
                           (1, 1, T, D), np.float64)
    assert out.shape == (B, H, T, D) and out.flags.c_contiguous


def test_attention_heads_gradients_are_pytorchs():
    rng = np.random.default_rng(1)
    qkv, mix = rng.standard_normal((B, T, 3 * H * D)), rng.standard_normal((B, H, T, D))
    x = lm.tensor(qkv.astype(np.float32), requires_grad=True)
    _attend(lm, x, lm.tensor(mix.astype(np.float32))).backward()
    xt = torch.tensor(qkv, requires_grad=True)
    _attend(torch, xt, torch.tensor(mix)).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_attention_heads_gradients_match_central_differences():
    rng = np.random.default_rng(2)
    qkv = lm.tensor(rng.standard_normal((B, T, 3 * H * D)), requires_grad=True)
    mix = lm.tensor(rng.standard_normal((B, H, T, D)))
    assert lm.gradcheck(lambda x: _attend(lm, x, mix), [qkv])
    mem = lm.tensor(rng.standard_normal((B, T, H, D)), requires_grad=True)
    weights = lm.tensor(rng.standard_normal((B, H, T, T)))

    def scores(m):  # both operands permuted views of one array
        q = F.transpose(m, (0, 2, 1, 3))
        return (q @ q.transpose(-1, -2) * weights).sum()

    assert lm.gradcheck(scores, [mem])
