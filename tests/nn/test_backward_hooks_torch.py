"""Module backward hooks against PyTorch's: the same grad_input and grad_output reach the
hooks (Grad-CAM's use), a returned value replaces the gradients alike, and a module
whose input needs no gradient gets None for it."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")


def _net(lib):
    nn = lib.nn
    net = nn.Sequential(nn.Conv2d(2, 3, 3, padding=1), nn.ReLU(), nn.Conv2d(3, 4, 3),
                        nn.Flatten(), nn.Linear(16, 2))
    net = net.double() if lib is torch else net.to("float64")
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.tensor(np.sin(np.arange(p.numel()) + i).reshape(tuple(p.shape))))
    return net


def _arr(g):
    return None if g is None else g.detach().numpy().copy()


def _run(lib, register, input_grad=True):
    net = _net(lib)
    seen = []
    register(net, seen)
    x = lib.tensor(np.cos(np.arange(2 * 2 * 4 * 4)).reshape(2, 2, 4, 4),
                   requires_grad=input_grad)
    (net(x) ** 2).sum().backward()
    grads = [p.grad.numpy().copy() for p in net.parameters()]
    return seen, grads, None if x.grad is None else x.grad.numpy().copy()


def _same(ours, theirs):
    if theirs is None:
        assert ours is None
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _same(o, t)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


REGISTER = {
    "observe": lambda net, seen: net[2].register_full_backward_hook(
        lambda m, gin, gout: seen.append(([_arr(g) for g in gin], [_arr(g) for g in gout]))),
    "replace grad_input": lambda net, seen: net[2].register_full_backward_hook(
        lambda m, gin, gout: (gin[0] * 0.5,)),
    "pre-hook": lambda net, seen: net[4].register_full_backward_pre_hook(
        lambda m, gout: (gout[0] * 3,)),
    "first layer": lambda net, seen: net[0].register_full_backward_hook(
        lambda m, gin, gout: seen.append(([_arr(g) for g in gin], [_arr(g) for g in gout]))),
}


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")  # both warn alike
@pytest.mark.parametrize("name", REGISTER)
@pytest.mark.parametrize("input_grad", [True, False])
def test_backward_hooks_see_and_change_what_pytorchs_do(name, input_grad):
    theirs = _run(torch, REGISTER[name], input_grad)
    ours = _run(lm, REGISTER[name], input_grad)
    _same(ours, theirs)


def test_removing_the_hook_stops_it():
    net = _net(lm)
    seen = []
    handle = net[0].register_full_backward_hook(lambda m, gi, go: seen.append(1))
    x = lm.ones(1, 2, 4, 4, dtype=lm.float64, requires_grad=True)
    net(x).sum().backward()
    handle.remove()
    net(x).sum().backward()
    assert seen == [1]


def test_a_hook_on_a_module_whose_input_needs_no_gradient_warns_as_pytorchs():
    for lib in (torch, lm):
        net = _net(lib)
        net[0].register_full_backward_hook(lambda m, gi, go: None)
        x = lib.tensor(np.ones((1, 2, 4, 4)))
        with pytest.warns(UserWarning, match="Full backward hook is firing"):
            net(x).sum().backward()
