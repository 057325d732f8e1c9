"""Each training algorithm on a tiny problem it must solve."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
import lamina.optim as optim
from lamina.data import ArrayDataset, DataLoader
from lamina.train import BP, Trainer, register_algorithm


def test_bp_learns_xor() -> None:
    lm.manual_seed(0)
    x = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float32)
    y = np.array([0, 1, 1, 0])
    model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
    trainer = Trainer(model, optim.Adam(model.parameters(), lr=0.05))
    loader = DataLoader(ArrayDataset(x, y), batch_size=4)
    trainer.fit(loader, epochs=300)
    result = trainer.evaluate(loader)
    assert result["accuracy"] == 1.0 and result["loss"] < 0.05


def test_bptt_learns_to_copy_across_chunk_boundaries() -> None:
    # y_t = x_{t-1}: at the first step of every chunk the answer lies in the previous
    # chunk, so it is learnable only if the state really is carried across chunks.
    lm.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, (256, 20))
    y = np.concatenate([np.zeros((256, 1), np.int64), x[:, :-1]], axis=1)
    model = nn.Sequential(nn.Embedding(4, 8),
                          nn.LSTM(8, 32, output="sequence", stateful=True),
                          nn.Linear(32, 4))
    trainer = Trainer(model, optim.Adam(model.parameters(), lr=0.02), algorithm="bptt")
    trainer.algorithm.bptt_steps = 5
    loader = DataLoader(ArrayDataset(x, y), batch_size=32, shuffle=True)
    trainer.fit(loader, epochs=15)
    model.eval()
    model[1].reset_state()
    with lm.no_grad():
        pred = np.concatenate([model(lm.tensor(x[:64, t:t + 5])).data.argmax(-1)
                               for t in range(0, 20, 5)], axis=1)
    starts = pred[:, 5::5] == y[:64, 5::5]  # chunk starts: the previous chunk's last symbol
    assert starts.mean() > 0.95
    assert (pred[:, 1:] == y[:64, 1:]).mean() > 0.97


def test_bptt_needs_a_stateful_layer() -> None:
    model = nn.Sequential(nn.Embedding(4, 4), nn.LSTM(4, 4, output="sequence"), nn.Linear(4, 4))
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.1), algorithm="bptt")
    loader = DataLoader(ArrayDataset(np.zeros((4, 6), np.int64), np.zeros((4, 6), np.int64)), 4)
    with pytest.raises(ValueError, match="stateful: true"):
        trainer.fit(loader, 1)


@pytest.mark.parametrize("persistent", [False, True])
def test_cd_lowers_reconstruction_error(persistent) -> None:
    lm.manual_seed(0)
    rng = np.random.default_rng(0)
    prototypes = (rng.random((3, 16)) < 0.5).astype(np.float32)
    v = prototypes[rng.integers(0, 3, 300)]
    v = np.abs(v - (rng.random(v.shape) < 0.05)).astype(np.float32)  # 5% flipped bits
    rbm = nn.RBM(16, 8)
    trainer = Trainer(rbm, optim.SGD(rbm.parameters(), lr=0.1, momentum=0.5), algorithm="cd",
                      metrics=[])
    trainer.algorithm.persistent = persistent
    loader = DataLoader(ArrayDataset(v), batch_size=20, shuffle=True)
    before = trainer.evaluate(loader)["recon_error"]
    history = trainer.fit(loader, epochs=20)
    after = trainer.evaluate(loader)["recon_error"]
    assert after < 0.5 * before
    assert history[-1]["recon_error"] < history[0]["recon_error"]
    assert history[-1]["pseudo_ll"] > history[0]["pseudo_ll"]
    if persistent:
        assert trainer.algorithm.state_dict()["chain"].shape == (20, 16)


def test_cd_needs_an_energy_model() -> None:
    model = nn.Sequential(nn.Linear(4, 4))
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.1), algorithm="cd")
    loader = DataLoader(ArrayDataset(np.zeros((4, 4), np.float32)), 4)
    with pytest.raises(ValueError, match=r"energy model with \['free_energy'.*got Sequential"):
        trainer.fit(loader, 1)


def test_user_algorithms_register_with_their_own_fields() -> None:
    @register_algorithm("bp_repeat")
    class Repeat(BP):
        def __init__(self, times: int = 2) -> None:
            self.times = times

        def train_one_batch(self, model, batch, updater):
            for _ in range(self.times):
                logs = super().train_one_batch(model, batch, updater)
            return logs

    model = nn.Linear(2, 2)
    opt = optim.SGD(model.parameters(), lr=0.1)
    trainer = Trainer(model, opt, algorithm=Repeat(times=3))
    loader = DataLoader(ArrayDataset(np.ones((2, 2), np.float32), np.zeros(2, np.int64)), 2)
    trainer.fit(loader, 1)
    assert trainer.iteration == 1
    from lamina.train import algorithm_class

    assert algorithm_class("bp_repeat") is Repeat
