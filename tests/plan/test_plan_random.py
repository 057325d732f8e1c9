"""Random models against eager: a plan tracks eager training through everything a user may
change between steps (batch size, any layer's mode, which parameters are frozen)."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
import lamina.optim as optim

DENSE = ["Linear", "ReLU", "Tanh", "Sigmoid", "GELU", "LeakyReLU", "Dropout", "BatchNorm1d"]
CONV = ["Conv1d", "ReLU", "MaxPool1d", "AvgPool1d", "Dropout", "BatchNorm1d"]


def _dense_config(rng):
    features = width = int(rng.integers(3, 9))
    layers = []
    for kind in rng.choice(DENSE, int(rng.integers(1, 6))):
        if kind == "Linear":
            out = int(rng.integers(2, 10))
            layers.append({"type": kind, "in_features": width, "out_features": out})
            width = out
        else:
            layers.append({"type": str(kind), **_options(kind, width)})
    layers.append({"type": "Linear", "in_features": width, "out_features": 4})
    return {"type": "Sequential", "layers": layers}, (features,)


def _conv_config(rng, split):
    channels, length = int(rng.integers(1, 4)), int(rng.integers(8, 16))
    shape, layers = (channels, length), []
    kinds = [k for k in CONV if not (split and k == "BatchNorm1d")]  # split: no batch stats
    for kind in rng.choice(kinds, int(rng.integers(1, 4))):
        if kind == "Conv1d":
            out, k, stride, pad, dil = (int(v) for v in rng.integers([1, 1, 1, 0, 1],
                                                                     [6, 4, 3, 2, 3]))
            groups = int(rng.choice([g for g in (1, 2, 3) if channels % g == 0 and out % g == 0]
                                    or [1]))
            new = (length + 2 * pad - dil * (k - 1) - 1) // stride + 1
            if new < 2:
                continue
            layers.append({"type": kind, "in_channels": channels, "out_channels": out,
                           "kernel_size": k, "stride": stride, "padding": pad,
                           "dilation": dil, "groups": groups})
            channels, length = out, new
        elif kind.endswith("Pool1d"):
            if length >= 4:
                layers.append({"type": str(kind), "kernel_size": 2})
                length //= 2
        else:
            layers.append({"type": str(kind), **_options(kind, channels)})
    layers += [{"type": "Flatten"},
               {"type": "Linear", "in_features": channels * length, "out_features": 4}]
    return {"type": "Sequential", "layers": layers}, shape


def _options(kind, width):
    return {"Dropout": {"p": 0.3}, "BatchNorm1d": {"num_features": width}}.get(kind, {})


def _change_something(rng, models):
    """What a user may do between steps: switch the model's or one layer's mode, freeze
    or unfreeze one parameter, or nothing."""
    action = rng.integers(0, 5)
    if action == 0:
        mode = bool(rng.integers(0, 2))
        for m in models:
            m.train(mode)
    elif action == 1:
        i, mode = int(rng.integers(0, len(models[0]))), bool(rng.integers(0, 2))
        for m in models:
            m[i].train(mode)
    elif action == 2:
        j, flag = int(rng.integers(0, len(list(models[0].parameters())))), bool(rng.integers(0, 2))
        for m in models:
            list(m.parameters())[j].requires_grad = flag


@pytest.mark.parametrize("family", ["dense", "conv"])
@pytest.mark.parametrize("seed", range(12))
def test_a_random_model_trains_the_same_planned_and_eager(family, seed) -> None:
    rng = np.random.default_rng(seed)
    split = family == "conv" and seed % 2 == 1
    config, shape = _dense_config(rng) if family == "dense" else _conv_config(rng, split)
    lm.manual_seed(seed)
    eager, planned = nn.from_config(config), nn.from_config(config)
    planned.load_state_dict(eager.state_dict())
    plan = lm.plan.compile(planned, F.cross_entropy, tune=seed % 3 == 0, threads=1 + split)
    opts = [optim.SGD(m.parameters(), lr=0.05, momentum=0.9) for m in (eager, planned)]
    for step in range(8):
        n = int(rng.choice([3, 4, 6]))
        x, y = (lm.tensor(rng.standard_normal((n, *shape)).astype(np.float32)),
                lm.tensor(rng.integers(0, 4, n)))
        _change_something(rng, (eager, planned))
        seed_of_step = int(rng.integers(0, 1000))  # the same dropout masks in both
        lm.manual_seed(seed_of_step)
        loss = F.cross_entropy(eager(x), y)
        if loss.requires_grad:
            loss.backward()
        lm.manual_seed(seed_of_step)
        planned_loss = plan(x, y)
        assert planned_loss.item() == pytest.approx(loss.item(), rel=1e-5, abs=1e-6), (
            f"step {step} of {config}")
        for opt in opts:
            opt.step()
            opt.zero_grad()
    for (name, a), b in zip(eager.state_dict().items(), planned.state_dict().values()):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5, err_msg=name)
