"""Each training algorithm on a tiny problem it must solve."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
import lamina.optim as optim
from lamina.data import ArrayDataset, DataLoader
from lamina.train import BP, BPTT, Trainer, register_algorithm


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
                          nn.LSTM(8, 32, output="sequence", stateful=True, batch_first=True),
                          nn.Linear(32, 4))
    trainer = Trainer(model, optim.Adam(model.parameters(), lr=0.02), algorithm="bptt")
    trainer.algorithm.bptt_steps = 5
    loader = DataLoader(ArrayDataset(x, y), batch_size=32, shuffle=True)
    trainer.fit(loader, epochs=15)
    model.eval()
    model[1].reset_state()
    with lm.no_grad():
        pred = np.concatenate([model(lm.tensor(x[:64, t:t + 5])).array.argmax(-1)
                               for t in range(0, 20, 5)], axis=1)
    starts = pred[:, 5::5] == y[:64, 5::5]  # chunk starts: the previous chunk's last symbol
    assert starts.mean() > 0.95
    assert (pred[:, 1:] == y[:64, 1:]).mean() > 0.97


@pytest.mark.parametrize("layer", [nn.LSTM, nn.GRU])
def test_bptt_compiled_trains_as_eager(layer) -> None:
    """trainer.compile with bptt: each chunk replays a plan that carries the recurrent
    state (19 steps in chunks of 5: a short last chunk). Two epochs give eager mode's
    history and weights."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 4, (24, 19))
    y = np.concatenate([np.zeros((24, 1), np.int64), x[:, :-1]], axis=1)
    results = []
    for compile in (False, True):
        lm.manual_seed(0)
        model = nn.Sequential(nn.Embedding(4, 8),
                              layer(8, 16, output="sequence", stateful=True),
                              nn.Linear(16, 4))
        trainer = Trainer(model, optim.Adam(model.parameters(), lr=0.02),
                          algorithm=BPTT(bptt_steps=5), compile=compile)
        history = trainer.fit(DataLoader(ArrayDataset(x, y), batch_size=8), epochs=2)
        results.append((history, model.state_dict()))
    (want_history, want), (got_history, got) = results
    for a, b in zip(want_history, got_history):
        assert a.keys() == b.keys() and all(np.isclose(a[k], b[k], rtol=1e-5) for k in a)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)
    assert trainer.algorithm.plans  # the plans really ran


def test_bptt_needs_a_stateful_layer() -> None:
    model = nn.Sequential(nn.Embedding(4, 4), nn.LSTM(4, 4, output="sequence", batch_first=True), nn.Linear(4, 4))
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


@pytest.mark.parametrize("persistent", [False, True])
def test_cd_in_arrays_equals_differentiating_the_free_energies(persistent) -> None:
    """RBM.contrastive_divergence (what CD runs on an RBM) against the general path: the
    gradient of mean F(v) - mean F(chain) by autograd, in float64, and the measures taken
    one by one, from the same random numbers."""
    rng = np.random.default_rng(0)
    v = (rng.random((12, 10)) < 0.4).astype(np.float64)
    start = (rng.random((12, 10)) < 0.5).astype(np.float64) if persistent else None
    lm.manual_seed(1)
    rbm = nn.RBM(10, 7).double()
    rbm.visible_bias.array[:] = rng.standard_normal(10)
    rbm.hidden_bias.array[:] = rng.standard_normal(7)
    state = lm.get_rng_state()
    grads, chain, logs = rbm.contrastive_divergence(v, 2, start)
    lm.set_rng_state(state)
    expected_chain = rbm.gibbs(v if start is None else start, 2)
    pseudo = rbm.pseudo_log_likelihood(v)
    np.testing.assert_array_equal(chain, expected_chain)
    loss = rbm.free_energy(lm.tensor(v)).mean() - rbm.free_energy(lm.tensor(chain)).mean()
    loss.backward()
    for name, p in rbm.named_parameters():
        np.testing.assert_allclose(grads[name], p.grad.array, rtol=1e-10, atol=1e-12)
    assert logs["loss"] == pytest.approx(loss.item(), rel=1e-10)
    assert logs["recon_error"] == pytest.approx(rbm.reconstruction_error(v), rel=1e-10)
    assert logs["pseudo_ll"] == pytest.approx(pseudo, rel=1e-10)


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_cd_compiled_agrees_with_numpy_in_float32() -> None:
    """The compiled CD step (lamina.fused's sigmoid, Bernoulli and measures kernels)
    against the NumPy code, from the same random numbers, on float32 weights large enough
    that the sigmoids and softplus meet both tails; both against float64. The chains are
    the same samples; the gradients agree to float32 rounding."""
    import lamina.fused as fused

    rng = np.random.default_rng(3)
    v = (rng.random((20, 64)) < 0.4).astype(np.float32)
    rbm = nn.RBM(64, 100)
    rbm.weight.array[:] = rng.standard_normal((100, 64)) * 3
    rbm.visible_bias.array[:] = rng.standard_normal(64) * 4
    rbm.hidden_bias.array[:] = rng.standard_normal(100) * 4
    out = {}
    for name in fused.BACKENDS:
        fused.set_backend(name)
        lm.manual_seed(5)
        out[name] = rbm.contrastive_divergence(v, 2)
        lm.manual_seed(5)
        np.testing.assert_array_equal(rbm.gibbs(v, 2), out[name][1])
    fused.set_backend(None)
    lm.manual_seed(5)
    exact_grads, exact_chain, exact = rbm.double().contrastive_divergence(
        v.astype(np.float64), 2)
    (g1, c1, m1), (g2, c2, m2) = out["numba"], out["numpy"]
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_array_equal(c1, exact_chain)
    for name in g1:
        for g in (g1[name], g2[name]):
            np.testing.assert_allclose(g, exact_grads[name], rtol=1e-5, atol=1e-6)
    for name in exact:
        # the pseudo-likelihood's gaps are differences of sums of a hundred softplus
        # terms: float32 keeps about six digits of them
        assert m1[name] == pytest.approx(exact[name], rel=1e-5), name
        assert m2[name] == pytest.approx(exact[name], rel=1e-5), name


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_cd_on_a_large_batch_runs_numpy_s_products() -> None:
    """Past nn.rbm.COMPILED_UP_TO multiply-adds a product, the compiled step (whose
    products run on one thread) gives way to NumPy's: the same gradients, bit for bit,
    whichever backend is set; within the limit they differ in float32 rounding."""
    import lamina.fused as fused
    from lamina.nn import rbm as rbm_module

    rng = np.random.default_rng(4)
    outs = {}
    for rows in (4, 64):
        v = (rng.random((rows, 256)) < 0.4).astype(np.float32)
        model = nn.RBM(256, 257)
        model.weight.array[:] = rng.standard_normal((257, 256))
        for name in fused.BACKENDS:
            fused.set_backend(name)
            lm.manual_seed(2)
            outs[rows, name] = model.contrastive_divergence(v, 1)[0]["weight"]
        fused.set_backend(None)
    assert 4 * 256 * 257 <= rbm_module.COMPILED_UP_TO < 64 * 256 * 257
    assert not np.array_equal(outs[4, "numba"], outs[4, "numpy"])
    np.testing.assert_allclose(outs[4, "numba"], outs[4, "numpy"], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(outs[64, "numba"], outs[64, "numpy"])


@pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba is not installed")
def test_gibbs_samples_one_sample_on_every_backend() -> None:
    """A single sample (V,) is sampled as NumPy's path does on every backend (the compiled
    kernels take batches (N, V) only): the same units, in the sample's shape."""
    import lamina.fused as fused

    model = nn.RBM(6, 4)
    model.weight.array[:] = np.random.default_rng(7).standard_normal((4, 6))
    v = np.array([1, 0, 1, 1, 0, 0], np.float32)
    samples = []
    for name in fused.BACKENDS:
        fused.set_backend(name)
        lm.manual_seed(3)
        samples.append(model.gibbs(v, 3))
    fused.set_backend(None)
    for sample in samples:
        assert sample.shape == (6,) and set(np.unique(sample)) <= {0.0, 1.0}
        np.testing.assert_array_equal(sample, samples[0])


def test_cd_trains_any_energy_model_by_its_free_energy() -> None:
    """A model with the energy interface but no contrastive_divergence trains through
    autograd, to the weights CD gives an RBM."""
    class Plain(nn.RBM):
        contrastive_divergence = None

    rng = np.random.default_rng(0)
    v = (rng.random((60, 12)) < 0.3).astype(np.float32)
    weights = []
    for cls in (nn.RBM, Plain):
        lm.manual_seed(0)
        rbm = cls(12, 5)
        trainer = Trainer(rbm, optim.SGD(rbm.parameters(), lr=0.1), algorithm="cd", metrics=[])
        history = trainer.fit(DataLoader(ArrayDataset(v), batch_size=20, shuffle=True), 2)
        weights.append((rbm.weight.array.copy(), history[-1]))
    np.testing.assert_allclose(weights[0][0], weights[1][0], rtol=1e-4, atol=1e-6)
    for key in ("loss", "recon_error", "pseudo_ll"):
        assert weights[0][1][key] == pytest.approx(weights[1][1][key], rel=1e-4, abs=1e-6)


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


# -- micro-batches (gradient accumulation) -------------------------------------------------
def _micro_run(micro_batches: int, loss: Any = "cross_entropy", compile: bool = False,
               batch_size: int = 10) -> tuple[list[dict[str, float]], list[np.ndarray]]:
    """Two epochs of a small MLP on fixed data; the history and the final weights."""
    lm.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((30, 6)).astype(np.float32)
    y = rng.integers(0, 3, 30)
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.1, momentum=0.9), loss=loss,
                      algorithm=BP(micro_batches=micro_batches), compile=compile)
    history = trainer.fit(DataLoader(ArrayDataset(x, y), batch_size=batch_size), epochs=2)
    return history, [p.array.copy() for p in model.parameters()]


@pytest.mark.parametrize("compile", [False, True])
@pytest.mark.parametrize("loss", ["cross_entropy", {"type": "cross_entropy", "reduction": "sum"},
                                  {"type": "cross_entropy", "label_smoothing": 0.1}])
def test_micro_batches_take_the_whole_batch_step(loss, compile) -> None:
    # Batches of 10 in 4 slices (2, 3, 2, 3 rows): unequal weights for a mean. The last
    # batch of 30 samples in batches of 10 is whole; batch_size 8 leaves a short one (6).
    for batch_size in (10, 8):
        want_history, want = _micro_run(1, loss, compile, batch_size)
        got_history, got = _micro_run(4, loss, compile, batch_size)
        for a, b in zip(want, got):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
        for a, b in zip(want_history, got_history):
            assert b["loss"] == pytest.approx(a["loss"], rel=1e-5)
            assert b["accuracy"] == pytest.approx(a["accuracy"])


def test_micro_batches_more_than_rows_take_one_row_each() -> None:
    _, want = _micro_run(1, batch_size=3)
    _, got = _micro_run(8, batch_size=3)
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("compile", [False, True])
def test_micro_batches_refuse_a_mean_that_counts_rows_unequally(compile) -> None:
    # Class weights make each slice's mean divide by its own weight total: the slices'
    # gradients weighted by rows are not the batch's. No update is made.
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((8, 4)).astype(np.float32), np.array([0, 0, 0, 0, 1, 1, 1, 0])
    model = nn.Linear(4, 2)
    before = [p.array.copy() for p in model.parameters()]
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.1),
                      loss={"type": "cross_entropy", "weight": [1.0, 5.0]},
                      algorithm=BP(micro_batches=2), compile=compile)
    with pytest.raises(ValueError, match=r"micro_batches=2: the batch's loss is .* counts rows "
                                         r"unequally .* reduction: sum"):
        trainer.fit(DataLoader(ArrayDataset(x, y), batch_size=8), epochs=1)
    assert all(np.array_equal(a, p.array) for a, p in zip(before, model.parameters()))
    assert all(p.grad is None for p in model.parameters())


def test_micro_batches_refuse_a_loss_neither_mean_nor_sum() -> None:
    def root_sum(out, y):
        return (F.cross_entropy(out, y, reduction="sum") + 1.0) ** 0.5

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((8, 4)).astype(np.float32), rng.integers(0, 2, 8)
    model = nn.Linear(4, 2)
    trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.1), loss=root_sum,
                      algorithm=BP(micro_batches=2))
    with pytest.raises(ValueError, match="needs a loss that is a mean or a sum over rows"):
        trainer.fit(DataLoader(ArrayDataset(x, y), batch_size=8), epochs=1)


@pytest.mark.parametrize("bad", [0, -1, 2.5])
def test_micro_batches_must_be_a_positive_int(bad) -> None:
    with pytest.raises(ValueError, match="micro_batches must be an int >= 1"):
        BP(micro_batches=bad)


def test_micro_batches_hold_a_slice_of_the_activations() -> None:
    # Activations of a wide MLP at batch 2048 dwarf its weights: the step's peak of new
    # memory falls with the slice, while the update is the batch's. (At 1024 the whole
    # batch's peak, ReLU's inputs freed, came within twice the slices'.)
    import tracemalloc

    from lamina.train.updater import LocalUpdater

    def peak(micro_batches: int) -> int:
        lm.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                              nn.Linear(512, 10))
        updater = LocalUpdater(model, optim.SGD(model.parameters(), lr=0.1))
        bp = BP(micro_batches=micro_batches).bind("cross_entropy", [])
        rng = np.random.default_rng(0)
        batch = (lm.tensor(rng.standard_normal((2048, 64)).astype(np.float32)),
                 lm.tensor(rng.integers(0, 10, 2048)))
        bp.train_one_batch(model, batch, updater)  # lazily made state exists first
        tracemalloc.start()
        bp.train_one_batch(model, batch, updater)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    whole, sliced = peak(1), peak(8)
    assert sliced < 0.5 * whole, (whole, sliced)


@pytest.mark.parametrize("threads", [1, 2])
def test_plan_grad_scale_scales_the_gradients_not_the_loss(threads) -> None:
    if threads > 1:
        pytest.importorskip("threadpoolctl")
    lm.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    x = lm.tensor(np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32))
    y = lm.tensor(np.array([0, 1, 2, 0, 1, 2]))
    plan = lm.plan.compile(model, F.cross_entropy, (x, y), threads=threads)
    loss = plan(x, y)
    want = [p.grad.copy() for p in model.parameters()]
    model.zero_grad()
    scaled = plan(x, y, grad_scale=0.25)
    assert scaled.item() == loss.item()
    for a, p in zip(want, model.parameters()):
        np.testing.assert_allclose(p.grad, 0.25 * a, rtol=1e-6)
    with pytest.raises(ValueError, match="grad_scale is for a training plan"):
        lm.plan.compile(model)(x, grad_scale=2.0)
