"""Optimizer state written by the user's code, as PyTorch's optimizers let it be: `state`
is {} for a parameter not stepped yet, and moments a subclass fills in as tensors before
the first step (A3C's SharedAdam, in shared memory) are the ones the steps update, in
place, with PyTorch's values."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")


def shared_adam(fw: str):
    t = importlib.import_module(fw)

    class SharedAdam(t.optim.Adam):  # as A3C implementations write it
        def __init__(self, params, lr=1e-3, betas=(0.9, 0.99), eps=1e-8, weight_decay=0):
            super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    state["step"] = t.zeros(1)
                    state["exp_avg"] = t.zeros_like(p.data)
                    state["exp_avg_sq"] = t.zeros_like(p.data)
                    state["exp_avg"].share_memory_()
                    state["exp_avg_sq"].share_memory_()

    return SharedAdam


def _run(fw: str, steps: int = 3):
    t, nn = importlib.import_module(fw), importlib.import_module(f"{fw}.nn")
    model = nn.Linear(3, 2)
    rng = np.random.default_rng(0)
    with t.no_grad():
        model.weight.copy_(t.tensor(rng.standard_normal((2, 3)).astype(np.float32)))
        model.bias.copy_(t.tensor(rng.standard_normal(2).astype(np.float32)))
    opt = shared_adam(fw)(model.parameters(), lr=0.1, weight_decay=0.01)
    held = {k: opt.state[model.weight][k] for k in ("step", "exp_avg", "exp_avg_sq")}
    x = t.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    for _ in range(steps):
        opt.zero_grad()
        (model(x) ** 2).sum().backward()
        opt.step()
    state = opt.state[model.weight]
    assert all(state[k] is held[k] for k in held)  # updated in place, never replaced
    assert state["exp_avg"].is_shared() and state["exp_avg_sq"].is_shared()
    return ([p.detach().numpy().copy() for p in model.parameters()],
            {k: v.numpy().copy() for k, v in state.items()})


def test_shared_adam_steps_as_pytorch_s():
    (ours, our_state), (theirs, their_state) = _run("lamina"), _run("torch")
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert our_state.keys() == their_state.keys()
    for k in our_state:
        np.testing.assert_allclose(our_state[k], their_state[k], rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(our_state["step"], [3.0])


def test_state_of_a_parameter_not_stepped_yet_is_empty():
    import lamina as lm

    for t in (lm, torch):
        p = t.nn.Parameter(t.ones(2))
        opt = t.optim.SGD([p], lr=0.1, momentum=0.9)
        assert opt.state[p] == {}
        p.grad = t.ones(2)
        opt.step()
        assert set(opt.state[p]) == {"momentum_buffer"}


def test_a_saved_one_element_step_loads_as_a_count():
    import lamina as lm

    model = lm.nn.Linear(3, 2)
    opt = shared_adam("lamina")(model.parameters(), lr=0.1)
    model(lm.ones(1, 3)).sum().backward()
    opt.step()
    again = lm.optim.Adam(model.parameters(), lr=0.1)
    again.load_state_dict(opt.state_dict())
    assert again.state[model.weight]["step"] == 1
    model(lm.ones(1, 3)).sum().backward()
    again.step()  # the restored moments and count step on
    assert again.state[model.weight]["step"] == 2


def custom_sgd(fw: str):
    t = importlib.import_module(fw)

    class MomentumSGD(t.optim.Optimizer):  # as PyTorch's tutorials write an optimizer
        def __init__(self, params, lr=0.01, momentum=0.9):
            super().__init__(params, dict(lr=lr, momentum=momentum))

        @t.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["buf"] = t.zeros_like(p, memory_format=t.preserve_format)
                    state["step"] += 1
                    state["buf"].mul_(group["momentum"]).add_(p.grad,
                                                              alpha=1 - group["momentum"])
                    p.add_(state["buf"], alpha=-group["lr"])

    return MomentumSGD


def _custom_run(fw: str):
    t, nn = importlib.import_module(fw), importlib.import_module(f"{fw}.nn")
    model = nn.Linear(3, 2)
    with t.no_grad():
        model.weight.copy_(t.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3) / 10))
        model.bias.zero_()
    make = custom_sgd(fw)
    opt = make(model.parameters(), lr=0.1)
    x = t.ones(4, 3)
    for _ in range(2):
        opt.zero_grad()
        (model(x) ** 2).sum().backward()
        opt.step()
    resumed = make(model.parameters(), lr=0.1)  # resume from the state dict, step once more
    resumed.load_state_dict(opt.state_dict())
    resumed.zero_grad()
    (model(x) ** 2).sum().backward()
    resumed.step()
    state = resumed.state[model.weight]
    return model.weight.detach().numpy().copy(), int(state["step"]), type(state["buf"])


def test_a_pytorch_style_optimizer_steps_and_resumes_as_pytorch_s():
    (ours, our_steps, our_kind), (theirs, their_steps, _) = _custom_run("lamina"), \
        _custom_run("torch")
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    assert our_steps == their_steps == 3
    import lamina as lm

    assert our_kind is lm.Tensor  # its own step calls tensor methods on it
