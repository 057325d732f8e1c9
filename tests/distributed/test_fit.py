"""`lamina.distributed.fit`: any model, defined here and registered nowhere, trains on the
parameter server from Python to the weights of single-process training."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from ps_helpers import train_on_concatenated_batches

import lamina as lm
import lamina.nn as nn
from lamina.data import ArrayDataset

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning")]


class Net(nn.Module):
    """A custom forward: a skip that scales, no Sequential, no config."""

    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(8, 16)
        self.out = nn.Linear(16, 4)

    def forward(self, x):
        h = self.inp(x).tanh()
        return self.out(h + 0.5 * h * h)


def _data(n=640):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 8)).astype(np.float32)
    y = (x[:, :2].sum(axis=1) > 0).astype(np.int64) + 2 * (x[:, 2] > 0)
    return x, y


@pytest.mark.parametrize("optimizer", [
    {"type": "SGD", "lr": 0.1, "momentum": 0.9},
    lambda params: lm.optim.SGD(params, lr=0.1, momentum=0.9)], ids=["config", "factory"])
def test_a_custom_module_trains_on_two_workers_as_on_the_concatenated_batch(
        cluster_env, optimizer, tmp_path) -> None:
    from lamina.distributed import fit

    x, y = _data()
    lm.manual_seed(0)
    model = Net()
    lm.manual_seed(0)
    local = Net()
    trained, history = fit(model, optimizer, ArrayDataset(x, y), epochs=1, batch_size=16,
                           workers=2, servers=2, seed=0, val_data=ArrayDataset(x, y))
    assert trained is model and len(history) == 1 and "val_accuracy" in history[0]
    train_on_concatenated_batches(local, lm.optim.SGD(local.parameters(), lr=0.1, momentum=0.9),
                                  x, y)
    for (n, p), (_, q) in zip(model.named_parameters(), local.named_parameters()):
        np.testing.assert_allclose(p.array, q.array, rtol=1e-6, atol=1e-7, err_msg=n)
    _exports_and_compiles(trained, x[:32], y[:32], tmp_path)


def _exports_and_compiles(model, x, y, tmp_path) -> None:
    """The trained model exports to ONNX (onnxruntime agrees to 1e-4 at another batch size)
    and compiles to a plan whose step equals the eager one."""
    ort = pytest.importorskip("onnxruntime")
    from plan_cases import assert_plan_tracks_eager

    path = lm.onnx.export(model, lm.tensor(x[:2]), tmp_path / "net.onnx",
                          dynamic_axes={"x": {0: "batch"}})
    got = ort.InferenceSession(str(path)).run(None, {"x": x})[0]
    with lm.no_grad():
        np.testing.assert_allclose(got, model(lm.tensor(x)).array, rtol=1e-4, atol=1e-4)
    xt, yt = lm.tensor(x), lm.tensor(y)
    assert_plan_tracks_eager(model, lm.plan.compile(model, lm.nn.functional.cross_entropy,
                                                    (xt, yt)), xt, yt)


def test_a_model_that_cannot_travel_is_refused_by_attribute(cluster_env) -> None:
    from lamina.distributed import fit

    model = Net()
    model.out.guard = threading.Lock()
    x, y = _data(64)
    with pytest.raises(TypeError, match=r"its attribute out\.guard \(lock\) cannot be "
                                        r"serialised"):
        fit(model, {"type": "SGD", "lr": 0.1}, ArrayDataset(x, y), workers=2)
