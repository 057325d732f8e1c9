"""load_state_dict's hooks against PyTorch's: a pre-hook renames an old checkpoint's
entries in a copy, a post-hook sees the incompatible keys and may forgive them, and a
strict load raises for what is left."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")


def _load_with_hooks(lib, state, clear_missing):
    seen = []
    seq = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())

    def pre(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        seen.append(("pre", prefix, sorted(state_dict)))
        if prefix + "w" in state_dict:  # an old checkpoint's name
            state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")

    def post(module, keys):
        seen.append(("post", list(keys.missing_keys), list(keys.unexpected_keys)))
        if clear_missing:
            keys.missing_keys.clear()

    seq[0].register_load_state_dict_pre_hook(pre)
    seq[0].register_load_state_dict_post_hook(post)
    given = {k: lib.tensor(v) for k, v in state.items()}
    try:
        result = repr(seq.load_state_dict(given))
    except RuntimeError as e:
        result = "raised: " + str(e).split(":")[0]
    return result, seen, sorted(given), seq[0].weight.detach().numpy().tolist()


@pytest.mark.parametrize("clear_missing", [True, False])
def test_load_state_dict_hooks_rename_and_forgive_as_pytorchs(clear_missing):
    state = {"0.w": np.ones((2, 2))}
    if not clear_missing:
        state["0.bias"] = np.zeros(2)
    ours = _load_with_hooks(lm, state, clear_missing)
    theirs = _load_with_hooks(torch, state, clear_missing)
    assert ours == theirs
