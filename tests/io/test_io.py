"""Checkpoints: round trips, atomic writes, and clear errors for bad files."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
import lamina.optim as optim
from lamina.io import CheckpointError


def _model():
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(),
                         nn.Linear(12, 2))


def _x():
    return lm.tensor(np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype(np.float32))


def test_round_trip_restores_weights_buffers_config_and_extra(tmp_path) -> None:
    model = _model()
    model(_x())  # move batch-norm statistics
    model.eval()
    path = lm.io.save(tmp_path / "ckpt.safetensors", model, extra={"epoch": 3, "note": "ok"})
    lm.manual_seed(42)
    other = _model().eval()
    info = lm.io.load(path, other)
    np.testing.assert_array_equal(model(_x()).array, other(_x()).array)
    assert info["extra"] == {"epoch": 3, "note": "ok"}
    assert nn.from_config(info["config"]).to_config() == model.to_config()
    assert int(other[1].num_batches_tracked.array) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.safetensors"]  # no temporary left


def test_a_failed_save_keeps_the_previous_file(tmp_path) -> None:
    path = tmp_path / "ckpt.safetensors"
    model = _model()
    lm.io.save(path, model, extra={"epoch": 1})
    before = path.read_bytes()
    with pytest.raises(TypeError, match="JSON-serialisable"):
        lm.io.save(path, model, extra={"bad": object()})
    assert path.read_bytes() == before
    assert len(list(tmp_path.iterdir())) == 1


def test_truncated_file_is_a_clear_error(tmp_path) -> None:
    path = tmp_path / "ckpt.safetensors"
    lm.io.save(path, _model())
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=r"ckpt\.safetensors: not a readable safetensors"):
        lm.io.load(path, _model())


def test_wrong_header_is_a_clear_error(tmp_path) -> None:
    path = tmp_path / "ckpt.safetensors"
    lm.io.save(path, _model())
    data = bytearray(path.read_bytes())
    data[8:12] = b"XXXX"  # break the JSON header
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="not a readable safetensors"):
        lm.io.load(path)


def test_a_pickle_is_refused_and_never_executed(tmp_path) -> None:
    import pickle

    marker = tmp_path / "executed"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = tmp_path / "model.safetensors"
    path.write_bytes(pickle.dumps(Evil()))
    with pytest.raises(CheckpointError):
        lm.io.load(path, _model())
    assert not marker.exists()


def test_missing_file_and_shape_mismatch_are_named(tmp_path) -> None:
    with pytest.raises(CheckpointError, match="no such checkpoint file"):
        lm.io.load(tmp_path / "nope.safetensors")
    path = lm.io.save(tmp_path / "small.safetensors", nn.Linear(3, 2))
    with pytest.raises(CheckpointError, match=r"(?s)small\.safetensors: does not fit the model \("
                       r".*weight: copying a param with shape lamina\.Size\(\[2, 3\]\) from "
                       r"checkpoint, the shape in current model is lamina\.Size\(\[5, 3\]\).*"
                       r"size mismatch for bias"):
        lm.io.load(path, nn.Linear(3, 5))  # every mismatch, in the model's order
    with pytest.raises(CheckpointError, match=r"(?s)does not fit the model .*Missing key\(s\) in state_dict: \"0\.weight\""):
        lm.io.load(path, nn.Sequential(nn.Linear(3, 2), nn.ReLU(), nn.Linear(2, 2)))


def test_optimizer_state_of_another_type_does_not_fit(tmp_path) -> None:
    model = nn.Linear(3, 2)
    path = lm.io.save(tmp_path / "adam.safetensors", model, optim.Adam(model.parameters()))
    with pytest.raises(CheckpointError, match=r"adam\.safetensors: does not fit the optimizer: "
                       r"SGD\.load_state_dict: the saved state has hyper-parameters that SGD"):
        lm.io.load(path, model, optim.SGD(model.parameters(), lr=0.1))


def test_load_without_an_optimizer_state_when_one_is_asked(tmp_path) -> None:
    class Dummy:
        def load_state_dict(self, state):
            raise AssertionError("not reached")

    path = lm.io.save(tmp_path / "w.safetensors", nn.Linear(2, 2))
    with pytest.raises(CheckpointError, match="holds no optimizer state"):
        lm.io.load(path, nn.Linear(2, 2), optimizer=Dummy())


def test_a_pytorch_state_dict_saved_as_safetensors_loads_as_is(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3), torch.nn.BatchNorm2d(3),
                                 torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(12, 2))
    theirs(torch.randn(4, 1, 4, 4))  # running statistics away from defaults
    theirs.eval()
    path = tmp_path / "torch.safetensors"
    save_file({k: v.contiguous() for k, v in theirs.state_dict().items()}, str(path))
    ours = _model().eval()
    info = lm.io.load(path, ours)
    assert info["config"] is None and info["extra"] == {}
    x = _x()
    want = theirs(torch.tensor(x.array)).detach().numpy()
    np.testing.assert_allclose(ours(x).array, want, rtol=1e-5, atol=1e-6)
