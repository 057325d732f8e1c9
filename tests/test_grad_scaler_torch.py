"""amp.GradScaler on the CPU against PyTorch's: the scale step by step, skipped steps where
gradients overflow, the weights, the state dict, and the errors of misuse."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _train(lib, steps=9):
    """SGD with momentum through a scaler that grows every two good steps; at steps 3 and
    6 the bias's gradient is NaN (sqrt's at 0, times 0)."""
    rng = np.random.default_rng(0)
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(rng.standard_normal((3, 4)).astype(np.float32)))
        model.bias.copy_(lib.tensor(rng.standard_normal(3).astype(np.float32)))
    opt = lib.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=2)
    trace = []
    for step in range(steps):
        x = rng.standard_normal((8, 4)).astype(np.float32)
        opt.zero_grad()
        loss = (model(lib.tensor(x)) ** 2).mean()
        if step in (3, 6):
            loss = loss + (model.bias * 0).sqrt().sum()
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        lib.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        before = model.weight.detach().numpy().copy()
        scaler.step(opt)
        scaler.update()
        after = model.weight.detach().numpy().copy()
        trace.append((bool(np.array_equal(before, after)), scaler.get_scale(), after))
    return trace, scaler.state_dict()


def test_the_scale_skipped_steps_and_weights_are_pytorchs() -> None:
    (ours, our_state), (theirs, their_state) = _train(lamina), _train(torch)
    assert [t[:2] for t in ours] == [t[:2] for t in theirs]
    assert [t[0] for t in ours] == [False] * 3 + [True] + [False] * 2 + [True] + [False] * 2
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a[2], b[2], rtol=1e-5, atol=1e-6)
    assert our_state == their_state
    restored = lamina.amp.GradScaler("cpu")
    restored.load_state_dict(our_state)
    assert restored.state_dict() == our_state


def test_scale_multiplies_tensors_and_their_lists_as_pytorch_s() -> None:
    for lib in (lamina, torch):
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0)
        out = scaler.scale([lib.ones(1), (lib.ones(1, dtype=lib.float64),)])
        assert isinstance(out, list) and isinstance(out[1], tuple)
        assert out[0].tolist() == [4.0] and out[1][0].dtype == lib.float64
        disabled = lib.amp.GradScaler("cpu", enabled=False)
        x = lib.ones(1)
        assert disabled.scale(x) is x and disabled.get_scale() == 1.0
        assert disabled.state_dict() == {}


def _misuse(lib, case):
    w = lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu")
    if case == "update before scale":
        scaler.update()
    if case == "no gradients":
        scaler.scale(w.sum())
        scaler.step(opt)
    if case == "half gradients":
        h = lib.ones(2, dtype=lib.float16, requires_grad=True)
        scaler.scale(h.sum()).backward()
        scaler.unscale_(lib.optim.SGD([h], lr=0.1))
    if case == "empty state":
        scaler.load_state_dict({})
    if case == "bad factor":
        lib.amp.GradScaler("cpu", backoff_factor=1.5)
    scaler.scale(w.sum()).backward()
    if case == "closure":
        scaler.step(opt, closure=lambda: None)
    scaler.unscale_(opt)
    if case == "unscale twice":
        scaler.unscale_(opt)
    scaler.step(opt)
    if case == "step twice":
        scaler.step(opt)
    if case == "unscale after step":
        scaler.unscale_(opt)


@pytest.mark.parametrize("case, error, message", [
    ("update before scale", AssertionError, "Attempted update but _scale is None"),
    ("no gradients", AssertionError, "No inf checks were recorded for this optimizer"),
    ("half gradients", ValueError, "Attempting to unscale FP16 gradients"),
    ("empty state", RuntimeError, "The source state dict is empty"),
    ("closure", RuntimeError, "Closure use is not currently supported"),
    ("unscale twice", RuntimeError, "unscale_\\(\\) has already been called on this optimizer"),
    ("step twice", RuntimeError, "step\\(\\) has already been called since the last update"),
    ("unscale after step", RuntimeError, "unscale_\\(\\) is being called after step\\(\\)"),
])
def test_misuse_raises_pytorchs_errors(case, error, message) -> None:
    for lib in (torch, lamina):
        with pytest.raises(error, match=message):
            _misuse(lib, case)
    with pytest.raises(ValueError, match="The backoff factor must be < 1.0"):
        _misuse(lamina, "bad factor")
