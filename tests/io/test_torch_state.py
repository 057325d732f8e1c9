"""PyTorch weights in and out through safetensors, with no mapping code."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn

torch = pytest.importorskip("torch")
from safetensors.torch import load_file, save_file  # noqa: E402

pytestmark = pytest.mark.torch
tnn = torch.nn


def _pairs():
    return [
        (lambda: nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                               nn.Flatten(), nn.Linear(36, 5)),
         lambda: tnn.Sequential(tnn.Conv2d(1, 4, 3), tnn.BatchNorm2d(4), tnn.ReLU(),
                                tnn.MaxPool2d(2), tnn.Flatten(), tnn.Linear(36, 5)),
         lambda rng: rng.standard_normal((3, 1, 8, 8)).astype(np.float32)),
        (lambda: nn.LSTM(4, 6, num_layers=2, output="sequence", batch_first=True),
         lambda: tnn.LSTM(4, 6, 2, batch_first=True),
         lambda rng: rng.standard_normal((2, 5, 4)).astype(np.float32)),
        (lambda: nn.GRU(4, 6, batch_first=True), lambda: tnn.GRU(4, 6, batch_first=True),
         lambda rng: rng.standard_normal((2, 5, 4)).astype(np.float32)),
    ]


def _torch_out(model, x):
    with torch.no_grad():
        y = model(torch.tensor(x))
    return (y[0] if isinstance(y, tuple) else y).numpy()


def _lamina_out(model, x):
    with lm.no_grad():
        y = model(lm.tensor(x))
    return (y[0] if isinstance(y, tuple) else y).array


@pytest.mark.parametrize("i", range(3))
def test_lamina_weights_load_into_pytorch_and_back(i, tmp_path) -> None:
    make_ours, make_theirs, make_x = _pairs()[i]
    lm.manual_seed(i)
    ours = make_ours()
    x = make_x(np.random.default_rng(0))
    ours(lm.tensor(x))  # batch-norm statistics away from their defaults
    ours.eval()
    lm.io.save_torch_state(ours, tmp_path / "ours.safetensors")
    theirs = make_theirs().eval()
    theirs.load_state_dict(load_file(str(tmp_path / "ours.safetensors")))  # strict
    np.testing.assert_allclose(_torch_out(theirs, x), _lamina_out(ours, x), rtol=1e-5, atol=1e-6)

    torch.manual_seed(5)
    fresh_theirs = make_theirs().eval()
    save_file({k: v.contiguous() for k, v in fresh_theirs.state_dict().items()},
              str(tmp_path / "theirs.safetensors"))
    back = make_ours().eval()
    lm.io.load_torch_state(back, tmp_path / "theirs.safetensors")
    np.testing.assert_allclose(_lamina_out(back, x), _torch_out(fresh_theirs, x), rtol=1e-5,
                               atol=1e-6)


def test_a_mismatched_architecture_names_the_keys(tmp_path) -> None:
    save_file(tnn.Linear(3, 4).state_dict(), str(tmp_path / "t.safetensors"))
    with pytest.raises(RuntimeError, match=r"size mismatch for weight: copying a param with "
                       r"shape lamina\.Size\(\[4, 3\]\) from checkpoint, the shape in current "
                       r"model is lamina\.Size\(\[5, 3\]\)\."):
        lm.io.load_torch_state(nn.Linear(3, 5), tmp_path / "t.safetensors")
