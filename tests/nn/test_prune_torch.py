"""nn.utils.prune against PyTorch's: the same masks (one pruning, pruning again among what
is left, structured along any dim, global), the same parameter and buffer names, the same
gradients through the mask, and `remove` giving back a plain parameter."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
from lamina.nn.utils import prune

torch = pytest.importorskip("torch")
tprune = pytest.importorskip("torch.nn.utils.prune")


def _pair(layer: str, seed: int = 0):
    """The same layer in both, float64, with distinct weights (no ties in a ranking)."""
    rng = np.random.default_rng(seed)
    t = eval(layer, {"__builtins__": {}}, vars(torch.nn)).double()  # noqa: S307
    m = eval(layer, {"__builtins__": {}}, vars(nn)).to("float64")  # noqa: S307
    with torch.no_grad():
        for p in t.parameters():
            p.copy_(torch.tensor(rng.permutation(p.numel()).reshape(p.shape) - p.numel() / 2
                                 + rng.uniform(0, 0.1, p.shape)))
    m.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    return t, m


def _same_masks(t, m, name="weight"):
    np.testing.assert_array_equal(getattr(m, name + "_mask").numpy(),
                                  getattr(t, name + "_mask").numpy())
    np.testing.assert_array_equal(getattr(m, name).detach().numpy(),
                                  getattr(t, name).detach().numpy())


# Each case: the layer, then one or more prunings of "weight" applied in turn.
CASES = {
    "l1 fraction": ("Linear(7, 5)", [("l1_unstructured", dict(amount=0.3))]),
    "l1 int": ("Linear(4, 3)", [("l1_unstructured", dict(amount=5))]),
    "l1 rounds half to even": ("Linear(5, 1)", [("l1_unstructured", dict(amount=0.5))]),
    "l1 twice": ("Linear(6, 5)", [("l1_unstructured", dict(amount=0.3)),
                                  ("l1_unstructured", dict(amount=0.5))]),
    "ln rows": ("Linear(6, 5)", [("ln_structured", dict(amount=2, n=2, dim=0))]),
    "ln channels L1": ("Conv2d(3, 6, 3)", [("ln_structured", dict(amount=0.5, n=1, dim=0))]),
    "ln inputs inf": ("Conv2d(4, 3, 2)", [("ln_structured", dict(amount=1, n=math.inf,
                                                                 dim=1))]),
    "ln fro, last dim": ("Linear(5, 4)", [("ln_structured", dict(amount=0.4, n="fro",
                                                                 dim=-1))]),
    "ln twice, two dims": ("Conv2d(4, 6, 2)", [("ln_structured", dict(amount=2, n=2, dim=0)),
                                               ("ln_structured", dict(amount=1, n=1, dim=1))]),
    "ln then l1": ("Conv2d(2, 4, 3)", [("ln_structured", dict(amount=1, n=2, dim=0)),
                                       ("l1_unstructured", dict(amount=0.25))]),
    "l1 then ln": ("Linear(6, 4)", [("l1_unstructured", dict(amount=10)),
                                    ("ln_structured", dict(amount=1, n=1, dim=0))]),
    "identity": ("Linear(3, 2)", [("identity", {})]),
}


@pytest.mark.parametrize("case", CASES)
def test_the_masks_and_names_are_pytorchs(case):
    layer, steps = CASES[case]
    t, m = _pair(layer)
    for fn, kwargs in steps:
        assert getattr(prune, fn)(m, "weight", **kwargs) is m
        getattr(tprune, fn)(t, "weight", **kwargs)
        _same_masks(t, m)
    assert list(m.state_dict()) == list(t.state_dict())
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert prune.is_pruned(m) and tprune.is_pruned(t)


def test_importance_scores_choose_instead_of_the_weights():
    t, m = _pair("Linear(5, 4)")
    scores = np.random.default_rng(1).standard_normal((4, 5))
    tprune.l1_unstructured(t, "weight", amount=0.45, importance_scores=torch.tensor(scores))
    prune.l1_unstructured(m, "weight", amount=0.45, importance_scores=lm.tensor(scores))
    _same_masks(t, m)
    t2, m2 = _pair("Conv2d(2, 5, 2)")
    scores = np.random.default_rng(2).standard_normal((5, 2, 2, 2))
    tprune.ln_structured(t2, "weight", 2, 2, 0, importance_scores=torch.tensor(scores))
    prune.ln_structured(m2, "weight", 2, 2, 0, importance_scores=lm.tensor(scores))
    _same_masks(t2, m2)


def test_global_pruning_ranks_all_the_layers_together():
    built = [_pair(layer, seed) for seed, layer in
             enumerate(["Linear(6, 4)", "Conv2d(2, 3, 2)", "Linear(4, 2)"])]
    tprune.l1_unstructured(built[0][0], "weight", amount=3)  # one already pruned
    prune.l1_unstructured(built[0][1], "weight", amount=3)
    for amount in (0.4, 7):
        tprune.global_unstructured([(t, "weight") for t, _ in built] + [(built[2][0], "bias")],
                                   pruning_method=tprune.L1Unstructured, amount=amount)
        prune.global_unstructured([(m, "weight") for _, m in built] + [(built[2][1], "bias")],
                                  pruning_method=prune.L1Unstructured, amount=amount)
        for t, m in built:
            _same_masks(t, m)
        _same_masks(built[2][0], built[2][1], "bias")


def test_training_through_the_mask_matches_pytorch_and_pruned_weights_stay_zero():
    t, m = _pair("Linear(6, 3)")
    tprune.l1_unstructured(t, "weight", amount=0.5)
    prune.l1_unstructured(m, "weight", amount=0.5)
    t_opt = torch.optim.SGD(t.parameters(), lr=0.1)
    m_opt = lm.optim.SGD(m.parameters(), lr=0.1)
    x = np.random.default_rng(3).standard_normal((4, 6))
    for _ in range(3):
        for model, opt, lib in ((t, t_opt, torch), (m, m_opt, lm)):
            opt.zero_grad()
            (model(lib.tensor(x)) ** 2).sum().backward()
            opt.step()
        np.testing.assert_allclose(m.weight_orig.grad.numpy(), t.weight_orig.grad.numpy(),
                                   rtol=1e-12)
        np.testing.assert_allclose(m.weight_orig.detach().numpy(),
                                   t.weight_orig.detach().numpy(), rtol=1e-12)
    with lm.no_grad():
        out = m(lm.tensor(x))  # the pre-hook recomputed weight from the trained orig
    assert (m.weight.numpy()[m.weight_mask.numpy() == 0] == 0).all()
    np.testing.assert_allclose(out.numpy(), t(torch.tensor(x)).detach().numpy(), rtol=1e-12)


def test_remove_makes_the_pruned_weight_a_parameter_again():
    t, m = _pair("Conv2d(2, 4, 3)")
    tprune.ln_structured(t, "weight", amount=1, n=2, dim=0)
    prune.ln_structured(m, "weight", amount=1, n=2, dim=0)
    tprune.remove(t, "weight")
    assert prune.remove(m, "weight") is m
    assert list(m.state_dict()) == list(t.state_dict())
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    np.testing.assert_array_equal(m.weight.detach().numpy(), t.weight.detach().numpy())
    assert not prune.is_pruned(m) and not tprune.is_pruned(t)
    prune.l1_unstructured(m, "weight", amount=2)  # and can be pruned afresh
    assert int((m.weight_mask.numpy() == 0).sum()) == 2


def test_a_pruned_models_state_dict_loads_into_a_model_pruned_the_same_way():
    t, m = _pair("Linear(4, 3)")
    tprune.l1_unstructured(t, "weight", amount=6)
    prune.l1_unstructured(m, "weight", amount=6)
    fresh = prune.identity(nn.Linear(4, 3).to("float64"), "weight")
    fresh.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    x = np.random.default_rng(4).standard_normal((2, 4))
    np.testing.assert_allclose(fresh(lm.tensor(x)).detach().numpy(),
                               t(torch.tensor(x)).detach().numpy(), rtol=1e-12)


def test_random_pruning_prunes_as_many_as_pytorch():
    for amount in (0.25, 3):
        t, m = _pair("Linear(4, 4)")
        tprune.random_unstructured(t, "weight", amount=amount)
        prune.random_unstructured(m, "weight", amount=amount)
        assert m.weight_mask.sum().item() == t.weight_mask.sum().item()
        t, m = _pair("Conv2d(2, 8, 1)")
        tprune.random_structured(t, "weight", amount=amount, dim=0)
        prune.random_structured(m, "weight", amount=amount, dim=0)
        kept = m.weight_mask.numpy().reshape(8, -1)
        assert m.weight_mask.sum().item() == t.weight_mask.sum().item()
        assert set(kept.min(axis=1)) == set(kept.max(axis=1)) <= {0.0, 1.0}


def test_custom_masks_combine_with_earlier_ones():
    t, m = _pair("Linear(3, 2)")
    first, second = np.array([[1, 0, 1], [1, 1, 0]]), np.array([[0, 1, 1], [1, 1, 1]])
    for mask in (first, second):
        tprune.custom_from_mask(t, "weight", torch.tensor(mask))
        prune.custom_from_mask(m, "weight", lm.tensor(mask))
    _same_masks(t, m)


BAD_CALLS = {  # each called with lamina's prune module, then with PyTorch's
    "more than there are": (lambda p, m: p.l1_unstructured(m, "weight", amount=7), ValueError),
    "a fraction over 1": (lambda p, m: p.l1_unstructured(m, "weight", amount=1.5), ValueError),
    "a negative amount": (lambda p, m: p.l1_unstructured(m, "weight", amount=-1), ValueError),
    "remove unpruned": (lambda p, m: p.remove(m, "weight"), ValueError),
    "no such parameter": (lambda p, m: p.l1_unstructured(m, "nothing", amount=1),
                          AttributeError),
    "global structured": (lambda p, m: p.global_unstructured(
        [(m, "weight")], pruning_method=p.LnStructured, amount=1, n=1, dim=0), TypeError),
    "scores of another shape": (lambda p, m: p.l1_unstructured(
        m, "weight", amount=1, importance_scores=m.weight[:1]), (ValueError, AssertionError)),
}


@pytest.mark.parametrize("case", BAD_CALLS)
def test_bad_calls_raise_as_pytorchs_do_and_change_nothing(case):
    call, error = BAD_CALLS[case]
    t, m = _pair("Linear(3, 2)")
    with pytest.raises(error, match="prune|amount|parameter|nothing|unstructured"):
        call(prune, m)
    with pytest.raises(error):
        call(tprune, t)
    assert not prune.is_pruned(m)
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
