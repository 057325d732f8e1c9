"""lamina.hub against torch.hub: a checkpoint PyTorch saved, fetched by URL into the hub
cache and read without running its pickle, the same state dict PyTorch's hub returns; the
hash in the file name checked; the cache reused; a failed check leaving nothing behind;
the cache directory by PyTorch's rule; and the code-running entry points refused."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import lamina as lm
from lamina import hub

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _checkpoint(tmp_path, name="weights.pt"):
    state = torch.nn.Linear(3, 2).state_dict()
    path = tmp_path / "served" / name
    path.parent.mkdir(exist_ok=True)
    torch.save(state, path)
    return state, path


def test_a_state_dict_loads_from_its_url_as_pytorchs(tmp_path) -> None:
    state, path = _checkpoint(tmp_path)
    ours = hub.load_state_dict_from_url(path.as_uri(), model_dir=str(tmp_path / "ours"),
                                        progress=False)
    theirs = torch.hub.load_state_dict_from_url(path.as_uri(), model_dir=str(tmp_path / "t"),
                                                progress=False)
    assert list(ours) == list(theirs) == list(state)
    for k in state:
        np.testing.assert_array_equal(ours[k].numpy(), theirs[k].numpy())
    model = lm.nn.Linear(3, 2)
    model.load_state_dict(ours)
    path.unlink()  # the cached copy is read from now on
    again = hub.load_state_dict_from_url(path.as_uri(), model_dir=str(tmp_path / "ours"))
    np.testing.assert_array_equal(again["weight"].numpy(), state["weight"].numpy())


def test_the_hash_in_the_file_name_is_checked(tmp_path) -> None:
    _, plain = _checkpoint(tmp_path)
    digest = hashlib.sha256(plain.read_bytes()).hexdigest()
    good = plain.with_name(f"weights-{digest[:8]}.pt")
    plain.rename(good)
    loaded = hub.load_state_dict_from_url(good.as_uri(), model_dir=str(tmp_path / "c"),
                                          check_hash=True, progress=False)
    assert set(loaded) == {"weight", "bias"}
    bad = good.rename(good.with_name("weights-00000000.pt"))
    for lib in (torch, lm):
        with pytest.raises(RuntimeError, match="invalid hash value"):
            lib.hub.load_state_dict_from_url(bad.as_uri(), model_dir=str(tmp_path / "bad"),
                                             check_hash=True, progress=False)
    assert not any((tmp_path / "bad").iterdir())  # nothing half-written left in the cache


def test_the_cache_directory_follows_pytorchs_rule(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "home" / "hub")
    hub.set_dir(tmp_path / "elsewhere")
    try:
        assert hub.get_dir() == str(tmp_path / "elsewhere")
    finally:
        hub._DIR["dir"] = None


def test_the_entry_points_that_run_a_repositorys_code_are_refused() -> None:
    for call in (lambda: hub.load("pytorch/vision", "resnet18"),
                 lambda: hub.list("pytorch/vision"),
                 lambda: hub.help("pytorch/vision", "resnet18")):
        with pytest.raises(RuntimeError, match="never executes what a downloaded file says"):
            call()
    from lamina.hub import load_state_dict_from_url  # the import torchvision-style code writes
    assert callable(load_state_dict_from_url)
