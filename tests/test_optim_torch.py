"""Optimizer trajectories, schedules and clipping against PyTorch (skipped where absent)."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.optim as optim
from lamina.optim import lr_scheduler

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

CONFIGS = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=1e-2)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.3, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.01)),
    ("Adagrad", dict(lr=0.05)),
    ("Adagrad", dict(lr=0.05, lr_decay=0.01, initial_accumulator_value=0.1, weight_decay=0.01)),
]


def _data():
    rng = np.random.default_rng(0)
    W1, b1 = rng.standard_normal((8, 5)) * 0.5, rng.standard_normal(8) * 0.1
    W2, b2 = rng.standard_normal((3, 8)) * 0.5, rng.standard_normal(3) * 0.1
    xs = rng.standard_normal((50, 16, 5))
    ys = rng.integers(0, 3, (50, 16))
    return [W1, b1, W2, b2], xs, ys


@pytest.mark.parametrize("name, kw", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_50_step_trajectory_matches_pytorch_float64(name, kw) -> None:
    init, xs, ys = _data()
    ours = [lm.tensor(w, requires_grad=True) for w in init]
    theirs = [torch.tensor(w, requires_grad=True) for w in init]
    opt_l = getattr(optim, name)(ours, **kw)
    opt_t = getattr(torch.optim, name)(theirs, **kw)
    for x, y in zip(xs, ys):
        loss = F.cross_entropy(F.linear(F.tanh(F.linear(lm.tensor(x), ours[0], ours[1])),
                                        ours[2], ours[3]), y)
        opt_l.zero_grad()
        loss.backward()
        opt_l.step()
        tnf = torch.nn.functional
        tloss = tnf.cross_entropy(tnf.linear(torch.tanh(tnf.linear(torch.tensor(x), theirs[0],
                                                                    theirs[1])), theirs[2],
                                             theirs[3]), torch.tensor(y))
        opt_t.zero_grad()
        tloss.backward()
        opt_t.step()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.array, b.detach().numpy(), rtol=1e-6, atol=1e-9)


def _pair(make_ours, make_theirs, steps=15, metrics=None):
    p = lm.tensor(np.ones(1), requires_grad=True)
    tp = torch.ones(1, requires_grad=True)
    ours, theirs = make_ours(optim.SGD([p], lr=0.5)), make_theirs(torch.optim.SGD([tp], lr=0.5))
    a, b = [], []
    for i in range(steps):
        ours.optimizer.step()  # the real order: optimizer first, then its schedule
        theirs.optimizer.step()
        if metrics is None:
            ours.step()
            theirs.step()
        else:
            ours.step(metrics[i])
            theirs.step(metrics[i])
        a.append(ours.get_last_lr()[0])
        b.append(theirs.get_last_lr()[0])
    return a, b


S = torch.optim.lr_scheduler


@pytest.mark.parametrize("ours, theirs", [
    (lambda o: lr_scheduler.StepLR(o, 4, 0.3), lambda o: S.StepLR(o, 4, 0.3)),
    (lambda o: lr_scheduler.MultiStepLR(o, [3, 7, 8]), lambda o: S.MultiStepLR(o, [3, 7, 8])),
    (lambda o: lr_scheduler.ExponentialLR(o, 0.9), lambda o: S.ExponentialLR(o, 0.9)),
    (lambda o: lr_scheduler.CosineAnnealingLR(o, 15, 0.01),
     lambda o: S.CosineAnnealingLR(o, 15, 0.01)),
    (lambda o: lr_scheduler.LinearLR(o, 0.25, 1.0, 6), lambda o: S.LinearLR(o, 0.25, 1.0, 6)),
    (lambda o: lr_scheduler.SequentialLR(o, [{"type": "LinearWarmup", "warmup_steps": 4},
                                             {"type": "CosineAnnealingLR", "T_max": 6},
                                             {"type": "ExponentialLR", "gamma": 0.8}], [4, 10]),
     lambda o: S.SequentialLR(o, [S.LinearLR(o, 0.1, 1.0, 4), S.CosineAnnealingLR(o, 6),
                                  S.ExponentialLR(o, 0.8)], [4, 10])),
], ids=["step", "multistep", "exponential", "cosine", "linear", "sequential"])
def test_schedule_matches_pytorch(ours, theirs) -> None:
    a, b = _pair(ours, theirs)
    np.testing.assert_allclose(a, b, rtol=1e-10)


def test_reduce_on_plateau_matches_pytorch() -> None:
    metrics = [1.0, 0.9, 0.91, 0.92, 0.93, 0.85, 0.86, 0.87, 0.88, 0.89, 0.9, 0.95, 0.99, 1.0, 1.1]
    a, b = _pair(lambda o: lr_scheduler.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1),
                 lambda o: S.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1),
                 metrics=metrics)
    assert a == b


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_pytorch(norm_type) -> None:
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    ours = [lm.tensor(np.zeros_like(g), requires_grad=True) for g in grads]
    theirs = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for o, t, g in zip(ours, theirs, grads):
        o.grad, t.grad = g.copy(), torch.tensor(g)
    total = optim.clip_grad_norm_(ours, 0.7, norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, 0.7, norm_type)
    assert total == pytest.approx(float(ttotal), rel=1e-12)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad, t.grad.numpy(), rtol=1e-12)
