"""Helpers the plan tests share: a tolerance check and SGD training, planned or eager."""

from __future__ import annotations

import numpy as np

import lamina.functions as F
import lamina.optim as optim


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0))))


def sgd_weights(model, batches, step=None, lr=0.05):
    """The state dict after one SGD step (momentum 0.9) per (x, y) batch, each step's
    gradients made by `step(x, y)` (a plan) or, without one, eager backward."""
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    for x, y in batches:
        if step is not None:
            step(x, y)
        else:
            F.cross_entropy(model(x), y).backward()
        opt.step()
        opt.zero_grad()
    return model.state_dict()


def fit_compiled_and_eager(make_model, x, y, compiled, epochs, eval_batch):
    """Train a fresh model (seed 0) with Trainer(compile=compiled), then eagerly, on
    shuffled batches of 16 (the last one smaller: another shape). Returns each run's
    (history, final state dict, trainer)."""
    import lamina as lm
    from lamina.data import ArrayDataset, DataLoader
    from lamina.train import Trainer

    runs = []
    for option in (compiled, False):
        lm.manual_seed(0)
        model = make_model()
        # SGD, not Adam: a conv bias before batch norm has a zero gradient up to rounding,
        # which Adam would scale up to full-size steps in different directions.
        trainer = Trainer(model, optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
                          compile=option)
        loader = DataLoader(ArrayDataset(x, y), 16, shuffle=True)
        history = trainer.fit(loader, epochs, DataLoader(ArrayDataset(x, y), eval_batch))
        runs.append((history, model.state_dict(), trainer))
    return runs
