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
    ("SGD", dict(lr=0.05, momentum=0.9, maximize=True, foreach=False)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("Adadelta", dict(lr=1.0)),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.05)),
    ("Adamax", dict(lr=0.01)),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, momentum_decay=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=10, weight_decay=0.01)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-4, 0.05), maximize=True)),
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
    if name == "ASGD":  # the averaged iterate too
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(opt_l.state[a]["ax"], opt_t.state[b]["ax"].numpy(),
                                       rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_with_a_closure_matches_pytorch(line_search_fn) -> None:
    init, xs, ys = _data()
    ours = [lm.tensor(w, requires_grad=True) for w in init]
    theirs = [torch.tensor(w, requires_grad=True) for w in init]
    opt_l = optim.LBFGS(ours, lr=0.5, max_iter=7, history_size=5, line_search_fn=line_search_fn)
    opt_t = torch.optim.LBFGS(theirs, lr=0.5, max_iter=7, history_size=5,
                              line_search_fn=line_search_fn)
    tnf = torch.nn.functional
    for x, y in zip(xs[:6], ys[:6]):
        def closure(x=x, y=y):
            opt_l.zero_grad()
            loss = F.cross_entropy(F.linear(F.tanh(F.linear(lm.tensor(x), ours[0], ours[1])),
                                            ours[2], ours[3]), y)
            loss.backward()
            return loss

        def tclosure(x=x, y=y):
            opt_t.zero_grad()
            loss = tnf.cross_entropy(tnf.linear(torch.tanh(tnf.linear(
                torch.tensor(x), theirs[0], theirs[1])), theirs[2], theirs[3]), torch.tensor(y))
            loss.backward()
            return loss

        assert opt_l.step(closure).item() == pytest.approx(opt_t.step(tclosure).item(),
                                                           rel=1e-9)
    state_l, state_t = opt_l.state[ours[0]], opt_t.state[theirs[0]]
    assert (state_l["func_evals"], state_l["n_iter"]) == (state_t["func_evals"],
                                                          state_t["n_iter"])
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.array, b.detach().numpy(), rtol=1e-7, atol=1e-10)


@pytest.mark.parametrize("name, kw", CONFIGS[3:8] + CONFIGS[13:],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_a_pytorch_optimizer_state_dict_loads_and_continues_the_same(name, kw) -> None:
    """torch trains 5 steps and saves; lamina loads its state dict (and the weights) and
    both go on for 5 more: the same weights."""
    init, xs, ys = _data()
    theirs = [torch.tensor(w, requires_grad=True) for w in init]
    opt_t = getattr(torch.optim, name)(theirs, **kw)
    tnf = torch.nn.functional

    def torch_step(x, y):
        opt_t.zero_grad()
        tnf.cross_entropy(tnf.linear(torch.tanh(tnf.linear(torch.tensor(x), theirs[0],
                                                            theirs[1])), theirs[2], theirs[3]),
                          torch.tensor(y)).backward()
        opt_t.step()

    for x, y in zip(xs[:5], ys[:5]):
        torch_step(x, y)
    ours = [lm.tensor(t.detach().numpy().copy(), requires_grad=True) for t in theirs]
    opt_l = getattr(optim, name)(ours, **kw)
    saved = opt_t.state_dict()
    opt_l.load_state_dict({
        "state": {k: {n: v.numpy() if torch.is_tensor(v) else v for n, v in s.items()}
                  for k, s in saved["state"].items()},
        "param_groups": saved["param_groups"]})
    for x, y in zip(xs[5:10], ys[5:10]):
        torch_step(x, y)
        opt_l.zero_grad()
        F.cross_entropy(F.linear(F.tanh(F.linear(lm.tensor(x), ours[0], ours[1])), ours[2],
                                 ours[3]), y).backward()
        opt_l.step()
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.array, b.detach().numpy(), rtol=1e-6, atol=1e-9)


def test_optimizer_param_groups_carry_pytorch_s_keys() -> None:
    p, tp = lm.tensor(np.zeros(2), requires_grad=True), torch.zeros(2, requires_grad=True)
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam",
                 "RAdam", "ASGD", "Rprop", "LBFGS"):
        ours = getattr(optim, name)([p], lr=0.1).param_groups[0]
        theirs = getattr(torch.optim, name)([tp], lr=0.1).param_groups[0]
        assert {k: v for k, v in ours.items() if k != "params"} == {
            k: v for k, v in theirs.items() if k != "params"}, name
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        optim.Adam([p], differentiable=True)


def test_add_param_group_takes_the_defaults_as_pytorch_does() -> None:
    a, b = lm.tensor(np.zeros(2), requires_grad=True), lm.tensor(np.zeros(3), requires_grad=True)
    opt = optim.SGD([a], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": [b], "lr": 0.01})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.01]
    assert opt.param_groups[1]["momentum"] == 0.9
    with pytest.raises(ValueError, match="a parameter appears in two groups"):
        opt.add_param_group({"params": [a]})


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
    (lambda o: lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)),
     lambda o: S.LambdaLR(o, lambda e: 1 / (1 + e))),
    (lambda o: lr_scheduler.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.95),
     lambda o: S.MultiplicativeLR(o, lambda e: 0.9 if e % 2 else 0.95)),
    (lambda o: lr_scheduler.ConstantLR(o, 0.25, 4), lambda o: S.ConstantLR(o, 0.25, 4)),
    (lambda o: lr_scheduler.PolynomialLR(o, 10, 2.0), lambda o: S.PolynomialLR(o, 10, 2.0)),
    (lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 3, 2, 0.01),
     lambda o: S.CosineAnnealingWarmRestarts(o, 3, 2, 0.01)),
    (lambda o: lr_scheduler.CosineAnnealingWarmRestarts(o, 4),
     lambda o: S.CosineAnnealingWarmRestarts(o, 4)),
    (lambda o: lr_scheduler.OneCycleLR(o, 1.0, 15), lambda o: S.OneCycleLR(o, 1.0, 15)),
    (lambda o: lr_scheduler.OneCycleLR(o, 1.0, epochs=3, steps_per_epoch=5, pct_start=0.4,
                                       anneal_strategy="linear", three_phase=True),
     lambda o: S.OneCycleLR(o, 1.0, epochs=3, steps_per_epoch=5, pct_start=0.4,
                            anneal_strategy="linear", three_phase=True)),
    (lambda o: lr_scheduler.CyclicLR(o, 0.1, 1.0, 3, 2, cycle_momentum=False),
     lambda o: S.CyclicLR(o, 0.1, 1.0, 3, 2, cycle_momentum=False)),
    (lambda o: lr_scheduler.CyclicLR(o, 0.1, 1.0, 2, mode="triangular2", cycle_momentum=False),
     lambda o: S.CyclicLR(o, 0.1, 1.0, 2, mode="triangular2", cycle_momentum=False)),
    (lambda o: lr_scheduler.CyclicLR(o, 0.1, 1.0, 2, mode="exp_range", gamma=0.9,
                                     cycle_momentum=False),
     lambda o: S.CyclicLR(o, 0.1, 1.0, 2, mode="exp_range", gamma=0.9, cycle_momentum=False)),
    (lambda o: lr_scheduler.ChainedScheduler([lr_scheduler.ConstantLR(o, 0.1, 3),
                                              lr_scheduler.ExponentialLR(o, 0.9)]),
     lambda o: S.ChainedScheduler([S.ConstantLR(o, 0.1, 3), S.ExponentialLR(o, 0.9)])),
], ids=["step", "multistep", "exponential", "cosine", "linear", "sequential", "lambda",
        "multiplicative", "constant", "polynomial", "warm-restarts", "warm-restarts-1",
        "one-cycle", "one-cycle-3", "cyclic", "cyclic-2", "cyclic-exp", "chained"])
def test_schedule_matches_pytorch(ours, theirs) -> None:
    a, b = _pair(ours, theirs)
    np.testing.assert_allclose(a, b, rtol=1e-10)


@pytest.mark.parametrize("name", ["OneCycleLR", "CyclicLR"])
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_cycled_momentum_matches_pytorch(name, opt_name) -> None:
    p, tp = lm.tensor(np.ones(1), requires_grad=True), torch.ones(1, requires_grad=True)
    kw = {"momentum": 0.9} if opt_name == "SGD" else {}
    ours_opt = getattr(optim, opt_name)([p], lr=0.1, **kw)
    theirs_opt = getattr(torch.optim, opt_name)([tp], lr=0.1, **kw)
    args = (1.0, 12) if name == "OneCycleLR" else (0.1, 1.0, 3)
    ours = getattr(lr_scheduler, name)(ours_opt, *args)
    theirs = getattr(S, name)(theirs_opt, *args)
    key = "momentum" if opt_name == "SGD" else "betas"
    for _ in range(11):
        ours_opt.step()
        theirs_opt.step()
        ours.step()
        theirs.step()
        assert ours.get_last_lr()[0] == pytest.approx(theirs.get_last_lr()[0], rel=1e-12)
        assert np.allclose(ours_opt.param_groups[0][key], theirs_opt.param_groups[0][key],
                           rtol=1e-12)


def test_reduce_on_plateau_matches_pytorch() -> None:
    metrics = [1.0, 0.9, 0.91, 0.92, 0.93, 0.85, 0.86, 0.87, 0.88, 0.89, 0.9, 0.95, 0.99, 1.0, 1.1]
    a, b = _pair(lambda o: lr_scheduler.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1),
                 lambda o: S.ReduceLROnPlateau(o, factor=0.5, patience=2, cooldown=1),
                 metrics=metrics)
    assert a == b


def _with_grads(seed):
    """Two float64 parameters in each library with the same random gradients."""
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5)]
    ours = [lm.tensor(np.zeros_like(g), requires_grad=True) for g in grads]
    theirs = [torch.zeros(g.shape, dtype=torch.float64, requires_grad=True) for g in grads]
    for o, t, g in zip(ours, theirs, grads):
        o.grad, t.grad = lm.tensor(g.copy()), torch.tensor(g)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_matches_pytorch(norm_type) -> None:
    ours, theirs = _with_grads(0)
    total = optim.clip_grad_norm_(ours, 0.7, norm_type)
    ttotal = torch.nn.utils.clip_grad_norm_(theirs, 0.7, norm_type)
    assert total == pytest.approx(float(ttotal), rel=1e-12)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad, t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_the_two_halves_of_clip_grad_norm_match_pytorchs(norm_type) -> None:
    ours, theirs = _with_grads(1)
    total = lm.nn.utils.get_total_norm([o.grad for o in ours], norm_type)
    ttotal = torch.nn.utils.get_total_norm([t.grad for t in theirs], norm_type)
    assert total.item() == pytest.approx(ttotal.item(), rel=1e-12)
    lm.nn.utils.clip_grads_with_norm_(ours, 0.7, total)
    torch.nn.utils.clip_grads_with_norm_(theirs, 0.7, ttotal)
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-12)
