"""ReduceLROnPlateau with a floor per parameter group and PyTorch's keyword `metrics`,
against PyTorch's."""

from __future__ import annotations

import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _trace(lib):
    params = [lib.nn.Parameter(lib.ones(1)) for _ in range(2)]
    opt = lib.optim.SGD([{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(params)])
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(
        opt, mode="max", factor=0.5, patience=1, threshold=0.1, threshold_mode="abs",
        cooldown=1, min_lr=[0.02, 0.05])
    lrs = []
    for value in [1.0, 1.05, 1.06, 1.2, 1.1, 1.0, 0.9, 0.95, 1.0, 1.0]:
        sched.step(metrics=value)
        lrs.append([round(g["lr"], 10) for g in opt.param_groups])
    return lrs


def test_plateau_floors_each_group_as_pytorch_does() -> None:
    assert _trace(lamina) == _trace(torch)
    opt = lamina.optim.SGD([lamina.nn.Parameter(lamina.ones(1))], lr=0.1)
    with pytest.raises(ValueError, match="expected 1 min_lrs, one per parameter group; got 2"):
        lamina.optim.lr_scheduler.ReduceLROnPlateau(opt, min_lr=[0.1, 0.2])
