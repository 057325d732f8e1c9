"""Causal attention by blocks of queries (CausalAttention, plan.rewrite_attention.
causal_blocks): the values and gradients of the ops it replaces, against central
differences and in plans of nanoGPT's attention and nn.SelfAttention, and where it must
not apply."""

from __future__ import annotations

import math

import numpy as np
import pytest
from plan_cases import (
    GPTAttention,
    close,
    eager_and_planned,
    language_loss,
    language_model,
    token_batch,
)

import lamina as lm
import lamina.nn as nn
from lamina import parallel
from lamina.plan import compile
from lamina.plan.kernels.causal import CausalAttention, blocks_for


def _reference(q, k, v, scale):
    """softmax(q k^T * scale, causal) @ v in float64 NumPy."""
    s = (q.astype(np.float64) @ np.swapaxes(k, -1, -2).astype(np.float64)) * scale
    t = s.shape[-1]
    s = np.where(np.triu(np.ones((t, t), bool), 1), -np.inf, s)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)


def _in_a_share(fn):
    """fn() as a share of a split step runs it (parallel.in_task): where the op runs its
    blocks, its products on one thread; elsewhere it runs the whole product."""
    return parallel.run_all([fn, lambda: None])[0]


def _qkv(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for _ in range(3)]


@pytest.mark.parametrize("blocks", [1, 2, 3, 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_blocks_give_the_whole_products_values(blocks, dtype):
    q, k, v = _qkv((2, 3, 10, 4), dtype)
    op = CausalAttention(0.5, blocks)
    op.needs_input_grad = (False, False, False)
    y = _in_a_share(lambda: op.forward(q, k, v))
    assert len(op.edges) == blocks
    np.testing.assert_allclose(y, _reference(q, k, v, 0.5), rtol=1e-5, atol=1e-6)
    whole = op.forward(q, k, v)  # outside a share: one block
    assert op.edges == [(0, 10)]
    np.testing.assert_allclose(whole, y, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("blocks", [2, 3])
def test_gradients_match_central_differences(blocks):
    tensors = [lm.tensor(a, requires_grad=True) for a in _qkv((2, 2, 7, 3), np.float64, 1)]
    assert lm.gradcheck(lambda *xs: _in_a_share(lambda: CausalAttention(0.7, blocks).apply(*xs)),
                        tensors)


def test_float32_gradients_through_the_compiled_kernels_match_float64():
    arrays = _qkv((2, 4, 50, 8), np.float32, 2)
    grads = []
    for dtype, blocks in ((np.float32, 2), (np.float64, 1)):
        ts = [lm.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
        op = CausalAttention(1 / math.sqrt(8), blocks)
        y = _in_a_share(lambda op=op, ts=ts: op.apply(*ts))
        (y * lm.tensor(arrays[0].astype(dtype))).sum().backward()
        grads.append([t.grad.array for t in ts])
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attention, length", [("gpt", 128), ("gpt", 261), ("gpt", 512),
                                               ("multihead", 130)])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_plan_runs_causal_attention_by_blocks_and_tracks_the_eager_step(attention, length,
                                                                          threads):
    layer = GPTAttention() if attention == "gpt" else nn.SelfAttention(16, 4, causal=True,
                                                                         batch_first=True)
    model, (x, y) = language_model(layer), token_batch(4 if length < 512 else 2, length)
    plan = compile(model, language_loss, (x, y), threads=threads)
    assert f"CausalAttention(q, k, v): {blocks_for(length)} blocks" in plan.describe()
    planned, eager = eager_and_planned(model, language_loss, x, y, step=plan)
    assert planned[0] == pytest.approx(eager[0], rel=1e-5)
    for name, g in eager[1].items():
        close(planned[1][name], g, 1e-4)


def test_an_inference_plan_runs_it_too():
    model, (x, _) = language_model(GPTAttention()).eval(), token_batch(1, 128)
    plan = compile(model, None, (x,))
    assert "CausalAttention" in [n.name for n in plan.last.forward]
    with lm.no_grad():
        np.testing.assert_allclose(plan(x).array, model(x).array, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["short", "not causal", "dropout"])
def test_where_it_does_not_apply_the_ops_stay(case):
    if case == "not causal":
        layer = nn.SelfAttention(16, 4, batch_first=True)
    else:
        layer = GPTAttention(dropout=0.1 if case == "dropout" else 0.0)
    model, (x, y) = language_model(layer), token_batch(4, 100 if case == "short" else 128)
    plan = compile(model, language_loss, (x, y))
    assert "CausalAttention" not in plan.describe()
