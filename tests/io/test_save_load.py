"""lamina.save / lamina.load: what users save round-trips through safetensors plus JSON;
PyTorch's own .pt files load without their pickle ever running."""

from __future__ import annotations

import io
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import lamina
from lamina.io import CheckpointError


def _checkpoint():
    w = lamina.randn(3, 2, requires_grad=True)
    return {"model": OrderedDict([("w", w), ("tied", w), ("b", lamina.arange(3))]),
            "optimizer": {"state": {0: {"step": 4, "exp_avg": np.ones(2)}},
                          "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0]}]},
            "epoch": 7, "loss": float("nan"), "name": "run", "none": None, "flag": True,
            "scalar": np.float32(0.5)}


@pytest.mark.parametrize("target", ["path", "file object"])
def test_what_users_save_comes_back_as_saved(tmp_path, target) -> None:
    obj = _checkpoint()
    if target == "path":
        lamina.save(obj, tmp_path / "ck.pt")
        back = lamina.load(tmp_path / "ck.pt", map_location="cpu")
    else:
        buf = io.BytesIO()
        lamina.save(obj, buf)
        buf.seek(0)
        back = lamina.load(buf)
    model = back["model"]
    assert isinstance(model, OrderedDict) and list(model) == ["w", "tied", "b"]
    assert model["w"] is model["tied"]  # one tensor saved once, shared again
    np.testing.assert_array_equal(model["w"].array, obj["model"]["w"].array)
    assert model["w"].requires_grad and model["b"].dtype == lamina.int64
    opt = back["optimizer"]
    assert list(opt["state"]) == [0] and opt["state"][0]["step"] == 4
    assert isinstance(opt["state"][0]["exp_avg"], np.ndarray)
    assert opt["param_groups"][0]["betas"] == (0.9, 0.999)
    assert np.isnan(back["loss"]) and back["epoch"] == 7 and back["name"] == "run"
    assert back["none"] is None and back["flag"] is True and back["scalar"] == 0.5


def test_the_file_is_plain_safetensors(tmp_path) -> None:
    st = pytest.importorskip("safetensors.numpy")
    lamina.save({"weight": lamina.ones(2, 2)}, tmp_path / "w.safetensors")
    assert list(st.load_file(tmp_path / "w.safetensors").values())[0].shape == (2, 2)
    st.save_file({"x": np.arange(3.0)}, tmp_path / "plain.safetensors")
    assert lamina.load(tmp_path / "plain.safetensors")["x"].tolist() == [0.0, 1.0, 2.0]


def test_saving_a_whole_module_says_to_save_its_state_dict(tmp_path) -> None:
    with pytest.raises(TypeError, match=r"obj\['net'\] is a Linear.*save its state_dict\(\)"):
        lamina.save({"net": lamina.nn.Linear(2, 2)}, tmp_path / "m.pt")
    with pytest.raises(TypeError, match=r"obj\[0\] is a function; lamina saves"):
        lamina.save([lambda: 0], tmp_path / "f.pt")
    assert not (tmp_path / "m.pt").exists()


def test_a_missing_or_foreign_file_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(CheckpointError, match="no such file"):
        lamina.load(tmp_path / "absent.pt")
    (tmp_path / "junk.pt").write_bytes(b"\x80\x04junk")
    with pytest.raises(CheckpointError, match="never unpickles"):
        lamina.load(tmp_path / "junk.pt")


@pytest.mark.torch
def test_a_pytorch_checkpoint_loads_and_gives_the_same_outputs(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(theirs.parameters())
    theirs(torch.ones(2, 3)).sum().backward()
    opt.step()
    torch.save({"model": theirs.state_dict(), "optimizer": opt.state_dict(), "epoch": 2,
                "half": torch.arange(4, dtype=torch.float16)[1:],
                "bf16": torch.tensor([1.5, -2.25], dtype=torch.bfloat16)}, tmp_path / "ck.pt")
    ck = lamina.load(tmp_path / "ck.pt")
    ours = lamina.nn.Sequential(lamina.nn.Linear(3, 4), lamina.nn.ReLU(),
                                lamina.nn.Linear(4, 2))
    report = ours.load_state_dict(ck["model"])
    assert report.missing_keys == [] and report.unexpected_keys == []
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(lamina.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    want = opt.state_dict()["state"][0]["exp_avg"].numpy()
    np.testing.assert_array_equal(ck["optimizer"]["state"][0]["exp_avg"].array, want)
    assert ck["epoch"] == 2 and ck["half"].tolist() == [1.0, 2.0, 3.0]
    assert ck["bf16"].dtype == lamina.float32 and ck["bf16"].tolist() == [1.5, -2.25]


class _Boom:
    """Pickles to a call of os.system: what a hostile checkpoint would hold."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_a_pytorch_file_whose_pickle_runs_code_is_refused_and_nothing_runs(tmp_path) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "evil.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("evil/data.pkl", pickle.dumps({"weight": _Boom(marker)}, protocol=2))
        z.writestr("evil/version", "3\n")
    with pytest.raises(CheckpointError, match=r"refused: the file's pickle asks for posix\.system"):
        lamina.load(path)
    assert not marker.exists()
