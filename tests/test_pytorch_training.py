"""PyTorch-style training code runs on lamina: a TensorDataset through a DataLoader, an
optimizer stepped with a closure, checked against PyTorch where the numbers must agree."""

from __future__ import annotations

import numpy as np
import pytest

import lamina


def test_a_tensor_dataset_batches_through_a_loader() -> None:
    x = lamina.arange(20, dtype=lamina.float32).reshape(10, 2)
    y = lamina.arange(10)
    ds = lamina.utils.data.TensorDataset(x, y)
    assert len(ds) == 10 and ds[3][0].tolist() == [6.0, 7.0] and ds[3][1].item() == 3
    batches = list(lamina.utils.data.DataLoader(ds, batch_size=4))
    assert [tuple(b[0].shape) for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert batches[2][1].tolist() == [8, 9]
    with pytest.raises(ValueError, match="TensorDataset: tensors must have one length"):
        lamina.utils.data.TensorDataset(x, lamina.arange(3))


@pytest.mark.torch
def test_step_with_a_closure_returns_the_loss_and_trains_as_pytorch() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    xs, ys = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))
    w0 = rng.standard_normal((1, 3)) * 0.1
    runs = []
    for lib in (lamina, torch):
        model = lib.nn.Linear(3, 1).double()
        with lib.no_grad():
            model.weight.copy_(lib.tensor(w0))
            model.bias.zero_()
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = lib.tensor(xs), lib.tensor(ys)

        def closure(model=model, opt=opt, x=x, y=y, lib=lib):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss

        runs.append([opt.step(closure).item() for _ in range(10)])
    np.testing.assert_allclose(runs[0], runs[1], rtol=1e-12)
    assert runs[0][-1] < runs[0][0]


def _orders(seed: int, epochs: int = 2) -> list[list[int]]:
    lamina.manual_seed(seed)
    loader = lamina.utils.data.DataLoader(
        lamina.utils.data.TensorDataset(lamina.arange(8)), batch_size=8, shuffle=True)
    return [next(iter(loader))[0].tolist() for _ in range(epochs)]


def test_shuffling_draws_a_new_order_each_epoch_decided_by_manual_seed() -> None:
    first, again, other = _orders(0), _orders(0), _orders(1)
    assert first == again  # the same seed, the same orders
    assert first[0] != first[1]  # a new order each epoch, without set_epoch
    assert first != other  # manual_seed decides them
    assert sorted(first[0]) == list(range(8))
    g = lamina.Generator().manual_seed(5)
    loader = lamina.utils.data.DataLoader(lamina.utils.data.TensorDataset(lamina.arange(8)),
                                          batch_size=8, shuffle=True, generator=g)
    h = lamina.Generator().manual_seed(5)
    twin = lamina.utils.data.DataLoader(lamina.utils.data.TensorDataset(lamina.arange(8)),
                                        batch_size=8, shuffle=True, generator=h)
    assert next(iter(loader))[0].tolist() == next(iter(twin))[0].tolist()


def test_pytorchs_defaults_and_samplers() -> None:
    ds = lamina.utils.data.TensorDataset(lamina.arange(6))
    assert len(list(lamina.utils.data.DataLoader(ds))) == 6  # batch_size 1, as PyTorch
    by_sampler = lamina.utils.data.DataLoader(ds, batch_size=4, sampler=[5, 4, 3, 2, 1, 0])
    assert [b[0].tolist() for b in by_sampler] == [[5, 4, 3, 2], [1, 0]]
    by_batches = lamina.utils.data.DataLoader(ds, batch_sampler=[[0, 2], [4, 1, 3]])
    assert [b[0].tolist() for b in by_batches] == [[0, 2], [4, 1, 3]]
    assert len(by_batches) == 2
    with pytest.raises(ValueError, match="mutually exclusive"):
        lamina.utils.data.DataLoader(ds, shuffle=True, sampler=[0])
    loader = lamina.utils.data.DataLoader(ds, batch_size=3, shuffle=True, seed=7)
    loader.set_epoch(4)
    a = [b[0].tolist() for b in loader]
    loader.set_epoch(4)
    assert [b[0].tolist() for b in loader] == a  # set_epoch pins the order (resume)
