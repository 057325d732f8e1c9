"""SparseAdam on an embedding table against PyTorch's (sparse gradients there, dense here):
the same rows move, by the same amounts."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.optim as optim

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.mark.parametrize("kw", [{}, {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-6},
                                {"maximize": True}], ids=str)
def test_sparse_adam_on_an_embedding_matches_pytorch(kw) -> None:
    rng = np.random.default_rng(0)
    table = rng.standard_normal((12, 4))
    batches = [rng.integers(0, 6, (3, 5)) for _ in range(6)]  # rows 6..11 never looked up
    results = []
    for lib, opt_cls in ((lm, optim.SparseAdam), (torch, torch.optim.SparseAdam)):
        emb = lib.nn.Embedding(12, 4, sparse=True).to(lib.float64)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(table))
        opt = opt_cls(emb.parameters(), **kw)
        for ids in batches:
            opt.zero_grad()
            (emb(lib.tensor(ids)) ** 3).sum().backward()
            opt.step()
        results.append((emb.weight.detach().numpy(), opt.state[emb.weight]["step"]))
    (ours, our_step), (theirs, their_step) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ours[6:], table[6:])
    assert int(our_step) == int(their_step) == len(batches)


def test_its_groups_and_errors_are_pytorchs() -> None:
    p = lm.tensor(np.ones(2), requires_grad=True)
    theirs = torch.optim.SparseAdam([torch.ones(2, requires_grad=True)]).param_groups[0]
    ours = optim.SparseAdam([p]).param_groups[0]
    assert {k: v for k, v in ours.items() if k != "params"} == {
        k: v for k, v in theirs.items() if k != "params"}
    with pytest.raises(ValueError, match="invalid eps"):
        optim.SparseAdam([p], eps=0)
