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
