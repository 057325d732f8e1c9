"""Plans of models written as PyTorch users write them (tests/custom_models.py: recurrent +
head, residual blocks, attention with masks, the resnet, gpt and lstm2 workloads), compiled
by tracing; each planned step equals the eager one."""

from __future__ import annotations

import numpy as np
import pytest
from custom_models import CASES
from plan_cases import close

import lamina as lm
import lamina.functions as F
from lamina.plan import compile


def _loss(out, y):
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))


@pytest.mark.parametrize("name", CASES)
def test_a_custom_module_compiles_to_a_plan_equal_to_eager(name) -> None:
    make, inputs = CASES[name]
    rng = np.random.default_rng(0)
    lm.manual_seed(0)
    model = make()
    xs = inputs(rng, 6)
    with lm.no_grad():
        out = model(*xs)
    y = lm.tensor(rng.integers(0, out.shape[-1], out.shape[:-1]))
    batch = (xs[0], y, *xs[1:])  # a training plan's batch: the target second
    plan = compile(model, _loss, batch)
    start = {k: v.clone() for k, v in model.state_dict().items()}  # a snapshot: state_dict() shares memory
    results = []
    for planned in (True, False):
        model.load_state_dict(start)
        model.zero_grad()
        lm.manual_seed(7)
        if planned:
            loss = plan(*batch)
        else:
            loss = _loss(model(*xs), y)
            loss.backward()
        results.append((loss.item(), {n: p.grad.copy() for n, p in model.named_parameters()
                                      if p.grad is not None}, {k: v.clone() for k, v in model.state_dict().items()}))
    (lp, gp, sp), (le, ge, se) = results
    assert lp == pytest.approx(le, rel=1e-6)
    assert sorted(gp) == sorted(ge) and ge
    for n, g in ge.items():
        close(gp[n], g)
    for n, b in se.items():
        close(sp[n], b, 1e-6)
    model.eval()
    infer = compile(model, example_batch=xs)
    np.testing.assert_allclose(infer(*xs).array, model(*xs).array, rtol=1e-5, atol=1e-6)
