"""What an optimizer takes as its parameters, against PyTorch: tensors, named_parameters()
pairs, groups with keys of their own, frozen parameters; and what it refuses."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.optim as optim

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _pair(shape=(3,)):
    return lm.tensor(np.ones(shape), requires_grad=True), torch.ones(shape, requires_grad=True)


def _groups(opt):
    """Each group's keys in order, its parameters' shapes and its other values."""
    return [(list(g), [tuple(p.shape) for p in g["params"]],
             {k: v for k, v in g.items() if k != "params"}) for g in opt.param_groups]


@pytest.mark.parametrize("make", [
    lambda t, p, q: [{"params": p}],  # one tensor, not its elements
    lambda t, p, q: [{"params": [p], "name": "head", "lr_scale": 0.5}, {"params": [q]}],
    lambda t, p, q: [("fc.weight", p), ("fc.bias", q)],  # named_parameters()
    lambda t, p, q: [{"params": [("a", p)], "lr": 0.5}, {"params": [("b", q)]}],
    lambda t, p, q: {p},  # a set of all the parameters: ordered by list() as in PyTorch
], ids=["one tensor", "own keys", "named", "named groups", "set"])
def test_groups_are_made_as_pytorch_makes_them(make) -> None:
    p, tp = _pair()
    q, tq = _pair((2,))
    ours = optim.SGD(make(lm, p, q), lr=0.1, momentum=0.9)
    theirs = torch.optim.SGD(make(torch, tp, tq), lr=0.1, momentum=0.9)
    assert _groups(ours) == _groups(theirs)


@pytest.mark.parametrize("make, error, message", [
    (lambda t, p, q: p, TypeError, "iterable of tensors or dicts, got a Tensor"),
    (lambda t, p, q: [{"params": {p}}], TypeError, "not a set"),
    (lambda t, p, q: [p, 1.0], TypeError, "one of the parameters is a float"),
    (lambda t, p, q: [p * 2], ValueError, "can't optimise a non-leaf tensor"),
    (lambda t, p, q: [("a", p), q], ValueError, "give all of them names"),
    (lambda t, p, q: [{"params": [("a", p)]}, {"params": [q]}], ValueError,
     "named parameters, or none"),
    (lambda t, p, q: [{"params": [p]}, {"params": [p]}], ValueError, "appears in two groups"),
], ids=["tensor", "set in a group", "number", "non-leaf", "some named", "groups named and not",
        "in two groups"])
def test_what_pytorch_refuses_is_refused_with_the_same_error_type(make, error, message) -> None:
    p, tp = _pair()
    q, tq = _pair((2,))
    with pytest.raises(error):
        torch.optim.SGD(make(torch, tp, tq), lr=0.1)
    with pytest.raises(error, match=message):
        optim.SGD(make(lm, p, q), lr=0.1)


def test_frozen_parameters_are_taken_and_left_as_they_are() -> None:
    """Fine-tuning passes all of a model's parameters with some frozen: both frameworks
    take them, and train only the others (float64, four steps of Adam)."""
    rng = np.random.default_rng(0)
    W, b, x = rng.standard_normal((3, 4)), rng.standard_normal(3), rng.standard_normal((5, 4))
    ours = [lm.tensor(W), lm.tensor(b, requires_grad=True)]
    theirs = [torch.tensor(W), torch.tensor(b, requires_grad=True)]
    opt_l, opt_t = optim.Adam(ours, lr=0.1), torch.optim.Adam(theirs, lr=0.1)
    for _ in range(4):
        opt_l.zero_grad()
        opt_t.zero_grad()
        (F.tanh(F.linear(lm.tensor(x), *ours)) ** 2).sum().backward()
        (torch.tanh(torch.nn.functional.linear(torch.tensor(x), *theirs)) ** 2).sum().backward()
        opt_l.step()
        opt_t.step()
    np.testing.assert_array_equal(ours[0].array, W)
    np.testing.assert_allclose(ours[1].array, theirs[1].detach().numpy(), rtol=1e-12)
    assert ours[0] not in opt_l.state and len(opt_l.state) == len(opt_t.state) == 1


def test_a_state_dict_with_names_and_a_schedule_s_keys_loads_as_in_pytorch() -> None:
    """OneCycleLR adds max_lr, min_lr and the momenta to each group; named parameters add
    param_names. A fresh optimizer loads such a state, lamina's or PyTorch's, and goes on
    as PyTorch does."""
    rng = np.random.default_rng(1)
    W0, x = rng.standard_normal((3, 4)), rng.standard_normal((6, 4))
    p, tp = lm.tensor(W0, requires_grad=True), torch.tensor(W0, requires_grad=True)

    def train(t, param, steps=3):
        opt = t.optim.SGD([("w", param)], lr=0.1, momentum=0.9)
        sched = t.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.5, total_steps=10)
        for _ in range(steps):
            opt.zero_grad()
            (t.tanh(t.tensor(x) @ param.T) ** 2).sum().backward()
            opt.step()
            sched.step()
        return opt

    saved_l, saved_t = train(lm, p).state_dict(), train(torch, tp).state_dict()
    assert {"max_lr", "min_lr", "max_momentum", "base_momentum", "initial_lr",
            "param_names"} <= set(saved_l["param_groups"][0])
    as_arrays = {"state": {k: {n: v.numpy() if torch.is_tensor(v) else v for n, v in s.items()}
                           for k, s in saved_t["state"].items()},
                 "param_groups": saved_t["param_groups"]}
    for saved in (saved_l, as_arrays):
        fresh = optim.SGD([("w", lm.tensor(p.array.copy(), requires_grad=True))], lr=0.1,
                          momentum=0.9)
        fresh.load_state_dict(saved)
        group = {k: v for k, v in fresh.param_groups[0].items() if k != "params"}
        assert group == {k: v for k, v in saved_t["param_groups"][0].items() if k != "params"}
        buffer = fresh.state[fresh.param_groups[0]["params"][0]]["momentum_buffer"]
        np.testing.assert_allclose(buffer, saved_t["state"][0]["momentum_buffer"].numpy(),
                                   rtol=1e-12)
    with pytest.raises(ValueError, match=r"parameters that SGD does not have, \['amsgrad', "):
        adam = optim.Adam([lm.tensor(W0, requires_grad=True)])
        optim.SGD([p], lr=0.1).load_state_dict(adam.state_dict())
