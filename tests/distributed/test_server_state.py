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


def test_a_restored_server_serves_the_version_before_its_last_step(tmp_path) -> None:
    """A lost node can take a worker and a shard down after that shard applied the worker's
    last push but before another shard got it: the restarted worker redoes the step from
    the version before, with its state as of the push before (seen once in CI as 'no
    parameters as of version 20 (at 21)'). The restored shard has both."""
    rng = np.random.default_rng(1)
    params = {"w": rng.standard_normal((3, 2)).astype(np.float32)}
    first = _server(tmp_path, params)
    for step in range(3):
        state = {"tag": [step, 0], "rng": np.arange(step, step + 4)}
        asyncio.run(first.push(0, (step, 0), _grads(rng, params), state))
    again = _server(tmp_path)
    assert again.version == first.version == 3
    version, before = asyncio.run(again.pull(0, 2))
    assert version == 2
    np.testing.assert_array_equal(before["w"], first.previous[1]["w"])
    assert not np.array_equal(before["w"], again.params["w"])
    snap = asyncio.run(again.snapshot(0, (1, 0)))
    np.testing.assert_array_equal(snap["rng"], np.arange(1, 5))
    with pytest.raises(RuntimeError, match=r"no parameters as of version 1 \(at 3\)"):
        asyncio.run(again.pull(0, 1))
    grads = _grads(rng, params)  # the kept arrays are writable: the next step copies in
    for server in (first, again):
        asyncio.run(server.push(0, (3, 0), grads))
    np.testing.assert_array_equal(again.previous[1]["w"], first.previous[1]["w"])
    np.testing.assert_array_equal(again.params["w"], first.params["w"])
