"""A parameter server's checkpoint restores its optimizer's state to the parameters it
belongs to, whatever order the file lists them in; optimizer state of another shape is
refused by name. The server runs here without Ray: it is a plain class."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

import lamina as lm
from lamina.distributed.server import ParameterServer


def _server(path, params=None):
    server = ParameterServer(0, {"type": "Adam", "lr": 0.1}, "bsp", 0, 1, 30.0, str(path), 1)
    if params is not None:
        asyncio.run(server.init_params(params))
    return server


def _grads(rng, params):
    return {n: rng.standard_normal(a.shape).astype(a.dtype) for n, a in params.items()}


@pytest.mark.parametrize("shapes", [{"z.weight": (3, 2), "a.bias": (3,)},
                                    {"z": (4,), "a": (4,)}], ids=["shapes", "same shape"])
def test_a_restored_server_steps_exactly_as_the_one_it_replaces(tmp_path, shapes) -> None:
    """Names in an order the file does not keep (it sorts them): Adam's moments used to be
    restored by position, crashing on broadcast or, for equal shapes, silently swapped."""
    rng = np.random.default_rng(0)
    params = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    first = _server(tmp_path, params)
    for step in range(3):
        asyncio.run(first.push(0, (step, 0), _grads(rng, params)))
    again = _server(tmp_path)  # restores server-0.safetensors
    assert again.restored and list(again.params) == list(shapes)
    grads = _grads(rng, params)
    for server in (first, again):
        asyncio.run(server.push(0, (3, 0), grads))
    for name in shapes:
        np.testing.assert_array_equal(again.params[name], first.params[name])
        ours, theirs = (s.optimizer.state[s.tensors[name]] for s in (again, first))
        np.testing.assert_array_equal(ours["exp_avg_sq"], theirs["exp_avg_sq"])


def test_optimizer_state_of_another_shape_is_refused_by_name() -> None:
    a, b = lm.nn.Linear(2, 3), lm.nn.Linear(3, 2)
    for model in (a, b):
        opt = lm.optim.Adam(model.parameters())
        model(lm.randn(4, model.in_features)).sum().backward()
        opt.step()
    saved = lm.optim.Adam(a.parameters())
    saved.state = {}
    other = lm.optim.Adam(b.parameters())
    b(lm.randn(4, 3)).sum().backward()
    other.step()
    with pytest.raises(ValueError, match=r"state 'exp_avg' of parameter 0 has shape \(2, 3\); "
                                         r"the parameter has shape \(3, 2\)"):
        saved.load_state_dict(other.state_dict())
    assert saved.state == {}  # nothing half-loaded
    with pytest.raises(TypeError, match=r"expected what Optimizer\.state_dict\(\) returns"):
        saved.load_state_dict([1, 2, 3])
