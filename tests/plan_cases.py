"""Helpers the plan tests share: a tolerance check, one step planned and eager from the same
state, a small batch-norm net and its batch, SGD training, planned or eager, and a small
language model around nanoGPT's attention."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
import lamina.optim as optim
from lamina.plan import compile


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0))))


def sgd_weights(model, batches, step=None, lr=0.05):
    """The state dict after one SGD step (momentum 0.9) per (x, y) batch, each step's
    gradients made by `step(x, y)` (a plan) or, without one, eager backward."""
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for x, y in batches:
        if step is not None:
            step(x, y)
        else:
            F.cross_entropy(model(x), y).backward()
        opt.step()
        opt.zero_grad()
    return model.state_dict()


def fit_compiled_and_eager(make_model, x, y, compiled, epochs, eval_batch):
    """Train a fresh model (seed 0) with Trainer(compile=compiled), then eagerly, on
    shuffled batches of 16 (the last one smaller: another shape). Returns each run's
    (history, final state dict, trainer)."""
    import lamina as lm
    from lamina.data import ArrayDataset, DataLoader
    from lamina.train import Trainer

    runs = []
    for option in (compiled, False):
        lm.manual_seed(0)
        model = make_model()
        # SGD, not Adam: a conv bias before batch norm has a zero gradient up to rounding,
        # which Adam would scale up to full-size steps in different directions.
        trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
                          compile=option)
        loader = DataLoader(ArrayDataset(x, y), 16, shuffle=True)
        history = trainer.fit(loader, epochs, DataLoader(ArrayDataset(x, y), eval_batch))
        runs.append((history, model.state_dict(), trainer))
    return runs


def eager_and_planned(model, loss_fn, x, y, seed=7, step=None):
    """One planned and one eager step from the same state: (loss, grads, state) of each.
    The plan is `step` if given (compiled before the model changed), else compiled here."""
    if step is None:
        step = compile(model, loss_fn, (x, y))
    start = {k: v.clone() for k, v in model.state_dict().items()}  # a snapshot: state_dict() shares memory
    results = []
    for planned in (True, False):
        model.load_state_dict(start)
        model.zero_grad()
        lm.manual_seed(seed)
        if planned:
            loss = step(x, y)
        else:
            loss = loss_fn(model(x), y)
            if loss.requires_grad:  # layers without parameters have nothing to backpropagate
                loss.backward()
        grads = {n: None if p.grad is None else p.grad.copy() for n, p in model.named_parameters()}
        results.append((loss.item(), grads, {k: v.clone() for k, v in model.state_dict().items()}))
    return results


def assert_plan_tracks_eager(model, plan, x, y) -> None:
    """The plan's step equals the eager step from the same state: loss, which gradients
    exist and their values, and the parameters and buffers each leaves behind."""
    planned, eager = eager_and_planned(model, F.cross_entropy, x, y, step=plan)
    assert planned[0] == pytest.approx(eager[0], rel=1e-6)
    assert [n for n, g in planned[1].items() if g is None] == [
        n for n, g in eager[1].items() if g is None]
    for n, g in eager[1].items():
        if g is not None:
            close(planned[1][n], g)
    for n, b in eager[2].items():
        close(planned[2][n], b, 1e-6)


def bn_net():
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


def batch():
    rng = np.random.default_rng(3)
    return (lm.tensor(rng.standard_normal((6, 4)).astype(np.float32)),
            lm.tensor(np.array([0, 1, 2, 0, 1, 2])))


class Custom(nn.Layer):
    """A layer holding `fc = Linear(4, out_features)` whose forward is `forward(self, x)`:
    the models the tracing tests write by hand, each a few lines of forward."""

    def __init__(self, forward, out_features=3) -> None:
        super().__init__()
        self.fc = nn.Linear(4, out_features)
        self._forward = forward

    def forward(self, x):
        return self._forward(self, x)


class GPTAttention(nn.Module):
    """nanoGPT's causal self-attention, as its users write it. `dropout`: on the weights
    in training mode; `read_v`: v read again past its heads (a plan's split of the heads
    must then leave the split alone)."""

    def __init__(self, width=16, heads=4, dropout=0.0, read_v=False) -> None:
        super().__init__()
        self.c_attn, self.c_proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.heads, self.dropout, self.read_v = heads, dropout, read_v

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        extra = v.sum() if self.read_v else 0.0
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C)) + extra


VOCAB = 13  # the language model's


def language_model(attention, width=16):
    """An embedding, `attention` (of that width) and a linear head over VOCAB, seed 0."""
    lm.manual_seed(0)
    return nn.Sequential(nn.Embedding(VOCAB, width), attention, nn.Linear(width, VOCAB))


def language_loss(out, y):
    return F.cross_entropy(out.reshape(-1, VOCAB), y.reshape(-1))


def token_batch(n, t):
    """n sequences of t ids and their n x t targets."""
    rng = np.random.default_rng(1)
    return (lm.tensor(rng.integers(0, VOCAB, (n, t))), lm.tensor(rng.integers(0, VOCAB, (n, t))))
