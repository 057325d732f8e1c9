"""A plan's split of a fused projection into attention heads (SplitHeads,
plan.rewrite.split_heads): the eager step's loss and gradients, nanoGPT's attention and
nn.MultiheadAttention's alike, the op's own gradient, and where it must not apply."""

from __future__ import annotations

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
from lamina.plan import compile
from lamina.plan.kernels.heads import SplitHeads

E, HEADS, T = 16, 4, 6


@pytest.mark.parametrize("attention", ["gpt", "multihead"])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_plan_splits_the_heads_in_one_op_and_tracks_the_eager_step(attention, threads):
    layer = GPTAttention() if attention == "gpt" else nn.SelfAttention(E, HEADS, causal=True,
                                                                         batch_first=True)
    model, (x, y) = language_model(layer), token_batch(5, T)
    plan = compile(model, language_loss, (x, y), threads=threads)
    program = plan.last if threads == 1 else plan.runner.programs[0]
    names = [n.name for n in program.forward]
    assert names.count("SplitHeads") == 1 and "Split" not in names
    assert "SplitHeads(x): 4 heads" in plan.describe()
    planned, eager = eager_and_planned(model, language_loss, x, y, step=plan)
    assert planned[0] == pytest.approx(eager[0], rel=1e-6)
    for name, g in eager[1].items():
        close(planned[1][name], g)


def test_a_part_read_past_its_heads_keeps_the_split():
    model, (x, y) = language_model(GPTAttention(read_v=True)), token_batch(5, T)
    plan = compile(model, language_loss, (x, y))
    assert "SplitHeads" not in plan.describe()
    planned, eager = eager_and_planned(model, language_loss, x, y, step=plan)
    assert planned[0] == pytest.approx(eager[0], rel=1e-6)


def test_an_inference_plan_splits_the_heads_too():
    model, (x, _) = language_model(GPTAttention()).eval(), token_batch(1, T)
    plan = compile(model, None, (x,))
    assert "SplitHeads" in [n.name for n in plan.last.forward]
    with lm.no_grad():
        np.testing.assert_allclose(plan(x).array, model(x).array, rtol=1e-6, atol=1e-6)


def test_the_ops_values_are_the_views_and_its_gradients_central_differences():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 3 * 8))
    parts = SplitHeads(3, 2).forward(x)
    views = [p.reshape(2, 3, 2, 4).transpose(0, 2, 1, 3) for p in np.split(x, 3, axis=-1)]
    for got, want in zip(parts, views):
        assert got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
    t = lm.tensor(x, requires_grad=True)
    # v's output unread: its gradient comes back as None, which the op takes as zeros
    assert lm.gradcheck(lambda a: SplitHeads(3, 2).apply(a)[:2], [t])
