"""Optimizers: hand-computed steps, bit-identical resume, hyper-parameter errors, schedules."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
import lamina.optim as optim
from lamina.optim import lr_scheduler

GRADS = [0.5, -0.2, 0.1]


def _three_steps(opt_cls, **kw):
    p = lm.tensor(np.array([1.0]), requires_grad=True)
    opt = opt_cls([p], **kw)
    out = []
    for g in GRADS:
        p.grad = np.array([g])
        opt.step()
        out.append(float(p.array[0]))
    return out


def test_sgd_momentum_dampening_weight_decay_by_hand() -> None:
    got = _three_steps(optim.SGD, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)
    # g1 = .51, b = .51, p = .949; g2 = -.19051, b = .9*.51 + .9*g2 = .287541, p = .9202459; ...
    np.testing.assert_allclose(got, [0.949, 0.9202459, 0.88453898869], rtol=1e-12)


def test_sgd_nesterov_by_hand() -> None:
    p, b, want = 1.0, None, []
    for g in GRADS:
        b = g if b is None else 0.9 * b + g
        p -= 0.1 * (g + 0.9 * b)
        want.append(p)
    np.testing.assert_allclose(_three_steps(optim.SGD, lr=0.1, momentum=0.9, nesterov=True),
                               want, rtol=1e-12)


@pytest.mark.parametrize("amsgrad", [False, True])
@pytest.mark.parametrize("cls, wd", [(optim.Adam, 0.1), (optim.AdamW, 0.1)])
def test_adam_family_by_hand(cls, wd, amsgrad) -> None:
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    p, m, v, vmax, want = 1.0, 0.0, 0.0, 0.0, []
    for t, g in enumerate(GRADS, start=1):
        if cls is optim.AdamW:
            p *= 1 - lr * wd
        else:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = max(vmax, v)
        vh = vmax if amsgrad else v
        p -= lr / (1 - b1**t) * m / (math.sqrt(vh) / math.sqrt(1 - b2**t) + eps)
        want.append(p)
    got = _three_steps(cls, lr=lr, weight_decay=wd, amsgrad=amsgrad)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_rmsprop_by_hand(centered, momentum) -> None:
    lr, alpha, eps, wd = 0.01, 0.9, 1e-8, 0.05
    p, s, a, buf, want = 1.0, 0.0, 0.0, 0.0, []
    for g in GRADS:
        g = g + wd * p
        s = alpha * s + (1 - alpha) * g * g
        a = alpha * a + (1 - alpha) * g
        d = math.sqrt(s - a * a) + eps if centered else math.sqrt(s) + eps
        if momentum:
            buf = momentum * buf + g / d
            p -= lr * buf
        else:
            p -= lr * g / d
        want.append(p)
    got = _three_steps(optim.RMSprop, lr=lr, alpha=alpha, weight_decay=wd, momentum=momentum,
                       centered=centered)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_adagrad_by_hand() -> None:
    lr, decay, eps, acc0 = 0.1, 0.5, 1e-10, 0.2
    p, s, want = 1.0, acc0, []
    for t, g in enumerate(GRADS, start=1):
        s += g * g
        p -= lr / (1 + (t - 1) * decay) * g / (math.sqrt(s) + eps)
        want.append(p)
    got = _three_steps(optim.Adagrad, lr=lr, lr_decay=decay, initial_accumulator_value=acc0)
    np.testing.assert_allclose(got, want, rtol=1e-12)


OPTIMIZERS = [
    (optim.SGD, dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    (optim.Adam, dict(lr=0.01, amsgrad=True)),
    (optim.AdamW, dict(lr=0.01)),
    (optim.RMSprop, dict(lr=0.01, momentum=0.5, centered=True)),
    (optim.Adagrad, dict(lr=0.05, lr_decay=0.01)),
]


def _mlp_run(opt_cls, kw, steps, model=None, opt=None):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((20, 16, 4)).astype(np.float32)
    ys = rng.integers(0, 3, (20, 16))
    if model is None:
        lm.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        opt = opt_cls(model.parameters(), **kw)
    for i in range(steps[0], steps[1]):
        loss = lm.functions.cross_entropy(model(lm.tensor(xs[i])), ys[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, opt


@pytest.mark.parametrize("opt_cls, kw", OPTIMIZERS, ids=lambda v: getattr(v, "__name__", ""))
def test_resume_after_10_steps_is_bit_identical(opt_cls, kw, tmp_path) -> None:
    straight, _ = _mlp_run(opt_cls, kw, (0, 20))
    model, opt = _mlp_run(opt_cls, kw, (0, 10))
    lm.io.save(tmp_path / "ckpt.safetensors", model, opt)
    lm.manual_seed(123)  # a fresh model with other weights
    fresh = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    fresh_opt = opt_cls(fresh.parameters(), **{**kw, "lr": 0.5})  # lr comes from the file
    lm.io.load(tmp_path / "ckpt.safetensors", fresh, fresh_opt)
    resumed, _ = _mlp_run(opt_cls, kw, (10, 20), fresh, fresh_opt)
    for (n, a), (_, b) in zip(straight.named_parameters(), resumed.named_parameters()):
        np.testing.assert_array_equal(a.array, b.array, err_msg=n)


def test_update_is_chainers_name_for_step_and_missing_grads_are_skipped() -> None:
    a = lm.tensor(np.ones(2), requires_grad=True)
    b = lm.tensor(np.ones(2), requires_grad=True)
    opt = optim.SGD([a, b], lr=0.5)
    a.grad = np.ones(2)
    opt.update()
    np.testing.assert_array_equal(a.array, [0.5, 0.5])
    np.testing.assert_array_equal(b.array, [1.0, 1.0])
    opt.zero_grad()
    assert a.grad is None


def test_parameter_groups_have_their_own_hyper_parameters() -> None:
    a = lm.tensor(np.ones(1), requires_grad=True)
    b = lm.tensor(np.ones(1), requires_grad=True)
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    a.grad, b.grad = np.ones(1), np.ones(1)
    opt.step()
    assert a.array[0] == pytest.approx(0.9) and b.array[0] == pytest.approx(0.0)
    state = opt.state_dict()
    assert [g["params"] for g in state["param_groups"]] == [[0], [1]]
    other = optim.SGD([{"params": [a]}], lr=0.1)
    with pytest.raises(ValueError, match=r"saved parameter groups have sizes \[1, 1\]; this optimizer's have \[1\]"):
        other.load_state_dict(state)


def test_from_config_puts_each_parameter_in_the_first_group_that_matches_it() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))
    config = {"type": "AdamW", "lr": 0.1, "weight_decay": 0.5,
              "groups": [{"params": ["1.*"], "weight_decay": 0.0, "lr": 0.2},
                         {"params": ["*.bias"], "weight_decay": 0.0}]}
    opt = optim.from_config(config, model.named_parameters())
    names = {id(p): n for n, p in model.named_parameters()}
    groups = [([names[id(p)] for p in g["params"]], g["lr"], g["weight_decay"])
              for g in opt.param_groups]
    assert groups == [(["0.weight", "3.weight"], 0.1, 0.5),  # the rest: top-level values
                      (["1.weight", "1.bias"], 0.2, 0.0),  # 1.bias matched here first
                      (["0.bias", "3.bias"], 0.1, 0.0)]
    for p in model.parameters():
        p.grad = np.zeros_like(p.array)
    before = {n: p.array.copy() for n, p in model.named_parameters()}
    opt.step()  # zero gradients: only weight decay moves a parameter
    moved = {n for n, p in model.named_parameters() if not np.array_equal(p.array, before[n])}
    assert moved == {"0.weight", "3.weight"}

    with pytest.raises(ValueError, match=r"groups\[0\]\.params: '2\.\*' matches no parameter"):
        optim.from_config({**config, "groups": [{"params": ["2.*"]}]}, model.named_parameters())
    lenient = optim.from_config({**config, "groups": [{"params": ["2.*"], "lr": 0.0}]},
                                model.named_parameters(), strict=False)
    assert len(lenient.param_groups) == 1  # a server's shard may lack a group's parameters
    with pytest.raises(TypeError, match="needs named parameters"):
        optim.from_config(config, model.parameters())
    with pytest.raises(ValueError, match=r"^optimizer\.type: unknown optimizer 'Adamm' \(did you mean "
                       r"'Adam'\?\); one of \['ASGD', 'Adadelta'"):
        optim.from_config({"type": "Adamm"}, model.parameters())
    with pytest.raises(ValueError, match=r"^optimizer\.groups\[1\]: 'weight_decy' is not a "
                       r"hyper-parameter of AdamW \(did you mean 'weight_decay'\?\); one of "):
        optim.from_config({**config, "groups": [{"params": ["1.*"]}, {"params": ["*.bias"],
                                                "weight_decy": 0.0}]}, model.named_parameters())


def test_state_of_another_optimizer_type_is_refused_by_name() -> None:
    a = lm.tensor(np.ones(3), requires_grad=True)
    adam = optim.AdamW([a], lr=0.01)
    a.grad = np.ones(3)
    adam.step()
    sgd = optim.SGD([a], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match=r"SGD\.load_state_dict: the saved state has hyper-"
                       r"parameters that SGD does not have, \['amsgrad', 'betas', 'capturable', "
                       r"'decoupled_weight_decay', 'eps'\]; was it saved by another optimizer "
                       r"type\? SGD has \['dampening', 'differentiable', "):
        sgd.load_state_dict(adam.state_dict())
    assert sgd.param_groups[0]["lr"] == 0.1 and sgd.state == {}  # left as it was
    with pytest.raises(ValueError, match=r"Adam\.load_state_dict: .*\['dampening', 'momentum', "
                       r"'nesterov'\]"):
        optim.Adam([a]).load_state_dict(sgd.state_dict())
    state = sgd.state_dict()  # saved before SGD gained nesterov: loads, with the default
    del state["param_groups"][0]["nesterov"]
    fresh = optim.SGD([a], lr=0.5, momentum=0.5)
    fresh.load_state_dict(state)
    assert fresh.param_groups[0]["lr"] == 0.1 and fresh.param_groups[0]["nesterov"] is False


@pytest.mark.parametrize("make, message", [
    (lambda p: optim.SGD(p, lr=-0.1), r"invalid lr: must be >= 0; got -0\.1"),
    (lambda p: optim.SGD(p, lr=0.1, momentum=-1), r"invalid momentum"),
    (lambda p: optim.SGD(p, lr=0.1, nesterov=True), r"invalid nesterov: needs momentum > 0"),
    (lambda p: optim.Adam(p, betas=(0.9, 1.0)), r"invalid betas: each beta must be in \[0, 1\); got \(0\.9, 1\.0\)"),
    (lambda p: optim.Adam(p, betas=(-0.1, 0.9)), r"invalid betas"),
    (lambda p: optim.Adam(p, eps=-1.0), r"invalid eps"),
    (lambda p: optim.AdamW(p, weight_decay=-0.1), r"invalid weight_decay"),
    (lambda p: optim.RMSprop(p, alpha=1.5), r"invalid alpha: must be in \[0, 1\]"),
    (lambda p: optim.Adagrad(p, lr_decay=-1), r"invalid lr_decay"),
    (lambda p: optim.SGD([], lr=0.1), r"empty parameter list"),
])
def test_bad_hyper_parameters_are_clear_errors(make, message) -> None:
    with pytest.raises(ValueError, match=message):
        make([lm.tensor(np.ones(1), requires_grad=True)])


def test_a_misspelt_hyper_parameter_is_kept_with_a_warning_naming_the_one_meant() -> None:
    p = lm.tensor(np.ones(1), requires_grad=True)
    with pytest.warns(UserWarning, match=r"^SGD: the parameter group's key 'momentun' is not a "
                      r"hyper-parameter of SGD \(did you mean 'momentum'\?\); it is kept as "
                      r"given, and momentum stays 0$"):
        opt = optim.SGD([{"params": [p], "momentun": 0.9}], lr=0.1)
    assert opt.param_groups[0]["momentun"] == 0.9 and opt.param_groups[0]["momentum"] == 0
    with warnings.catch_warnings():  # a key near none of SGD's: no warning
        warnings.simplefilter("error")
        optim.SGD([{"params": [p], "name": "head", "lr_scale": 0.5}], lr=0.1)


def test_clip_grad_norm_scales_jointly_and_clip_value_clamps() -> None:
    a = lm.tensor(np.zeros(2), requires_grad=True)
    b = lm.tensor(np.zeros(1), requires_grad=True)
    a.grad, b.grad = np.array([3.0, 0.0]), np.array([4.0])
    total = optim.clip_grad_norm_([a, b], max_norm=1.0)
    assert total == pytest.approx(5.0)
    np.testing.assert_allclose(np.concatenate([a.grad, b.grad]), [0.6, 0, 0.8], rtol=1e-5)
    a.grad = np.array([0.1, -0.1])
    assert optim.clip_grad_norm_([a], 10.0) == pytest.approx(math.sqrt(0.02))
    np.testing.assert_array_equal(a.grad, [0.1, -0.1])  # under the bound: unchanged
    a.grad = np.array([2.0, -3.0])
    assert optim.clip_grad_norm_([a], 1.0, norm_type=float("inf")) == 3.0
    a.grad = np.array([2.0, -3.0])
    optim.clip_grad_value_([a], 1.5)
    np.testing.assert_array_equal(a.grad, [1.5, -1.5])
    a.grad = np.array([np.nan, 1.0])
    with pytest.raises(RuntimeError, match="total norm of order 2.0 of the gradients is nan"):
        optim.clip_grad_norm_([a], 1.0, error_if_nonfinite=True)


def _lrs(make_sched, steps=12, lr=1.0):
    p = lm.tensor(np.ones(1), requires_grad=True)
    opt = optim.SGD([p], lr=lr)
    sched = make_sched(opt)
    out = [opt.param_groups[0]["lr"]]
    for _ in range(steps):
        sched.step()
        out.append(opt.param_groups[0]["lr"])
    return out


def test_schedules_closed_forms() -> None:
    assert _lrs(lambda o: lr_scheduler.StepLR(o, 3, 0.5), 7) == [1, 1, 1, .5, .5, .5, .25, .25]
    assert _lrs(lambda o: lr_scheduler.MultiStepLR(o, [2, 5], 0.1), 6) == pytest.approx(
        [1, 1, .1, .1, .1, .01, .01])
    assert _lrs(lambda o: lr_scheduler.ExponentialLR(o, 0.5), 3) == [1, .5, .25, .125]
    cos = _lrs(lambda o: lr_scheduler.CosineAnnealingLR(o, 4, 0.0), 4)
    assert cos == pytest.approx([1, (1 + math.cos(math.pi / 4)) / 2, 0.5,
                                 (1 + math.cos(3 * math.pi / 4)) / 2, 0])
    assert _lrs(lambda o: lr_scheduler.LinearWarmup(o, 4, 0.2), 6) == pytest.approx(
        [0.2, 0.4, 0.6, 0.8, 1, 1, 1])


def test_schedule_state_dict_resumes_the_same_sequence() -> None:
    p = lm.tensor(np.ones(1), requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    sched = lr_scheduler.CosineAnnealingLR(opt, 10, 0.01)
    for _ in range(4):
        sched.step()
    state = sched.state_dict()
    opt2 = optim.SGD([p], lr=1.0)
    sched2 = lr_scheduler.CosineAnnealingLR(opt2, 10, 0.01)
    sched2.load_state_dict(state)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    sched.step()
    sched2.step()
    assert sched.get_last_lr() == sched2.get_last_lr()


def test_sequential_schedules_restart_at_each_milestone_and_resume() -> None:
    def make(o):
        return lr_scheduler.SequentialLR(o, [lr_scheduler.LinearWarmup(o, 2, 0.5),
                                             {"type": "StepLR", "step_size": 2, "gamma": 0.1}],
                                         [3])

    assert _lrs(make, 6) == pytest.approx([0.5, 0.75, 1, 1, 1, 0.1, 0.1])  # StepLR from 0 at 3
    p = lm.tensor(np.ones(1), requires_grad=True)
    opt, opt2 = optim.SGD([p], lr=1.0), optim.SGD([p], lr=1.0)
    first = make(opt)
    for _ in range(4):
        first.step()
    state = json.loads(json.dumps(first.state_dict()))  # checkpoints keep it as JSON
    second = make(opt2)
    second.load_state_dict(state)
    for _ in range(3):
        first.step()
        second.step()
        assert second.get_last_lr() == first.get_last_lr()


@pytest.mark.parametrize("schedulers, milestones, message", [
    ([{"type": "LinearWarmup", "warmup_steps": 2}], [], "needs two or more schedules"),
    ([{"type": "StepLR", "step_size": 1}, {"type": "StepLR", "step_size": 1}], [2, 3],
     r"one milestone fewer; got 2 and milestones \[2, 3\]"),
    ([{"type": "StepLR", "step_size": 1}, {"type": "StepLR", "step_size": 1}], [0],
     r"milestones must increase from above 0; got \[0\]"),
    ([{"type": "ReduceLROnPlateau"}, {"type": "StepLR", "step_size": 1}], [2],
     r"schedulers\[0\] must be a schedule or a config with 'type' one of \['ConstantLR', 'CosineAnnealingLR'"),
])
def test_sequential_schedule_errors_say_what_is_wrong(schedulers, milestones, message) -> None:
    opt = optim.SGD([lm.tensor(np.ones(1), requires_grad=True)], lr=1.0)
    with pytest.raises(ValueError, match=message):
        lr_scheduler.SequentialLR(opt, schedulers, milestones)


def test_reduce_on_plateau_waits_for_patience_then_cools_down() -> None:
    p = lm.tensor(np.ones(1), requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    sched = lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=2, cooldown=1)
    lrs = []
    for metric in [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]:
        sched.step(metric)
        lrs.append(sched.get_last_lr()[0])
    assert lrs == [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.25]
