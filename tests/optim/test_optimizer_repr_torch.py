"""Optimizers and losses print as PyTorch's: every optimizer both libraries have, with its
defaults and with groups of their own, and every loss module."""

from __future__ import annotations

import warnings

import pytest

import lamina as lm

torch = pytest.importorskip("torch")

OPTIMIZERS = sorted(n for n in dir(torch.optim)
                    if n[0].isupper() and n != "Optimizer" and hasattr(lm.optim, n))


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_an_optimizer_prints_its_groups_as_pytorchs(name):
    printed = []
    for lib in (torch, lm):
        first, second = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plain = getattr(lib.optim, name)([first], lr=0.01)
            groups = plain if name == "LBFGS" else getattr(lib.optim, name)(  # LBFGS: one
                [{"params": [first]}, {"params": [second], "lr": 0.5}], lr=0.01)
        printed.append((repr(plain), str(groups)))
    assert printed[0] == printed[1]
    assert name == "LBFGS" or "Parameter Group 1" in printed[1][1]


LOSSES = sorted(n for n in dir(torch.nn) if n.endswith("Loss") and hasattr(lm.nn, n)
                and n not in ("AdaptiveLogSoftmaxWithLoss", "LinearCrossEntropyLoss"))
# (those two take sizes; tests/nn compares their reprs)


@pytest.mark.parametrize("name", LOSSES)
def test_a_loss_module_prints_as_pytorchs(name):
    made = []
    for lib in (torch, lm):
        try:
            made.append(repr(getattr(lib.nn, name)(reduction="sum")))
        except TypeError:  # a loss without a reduction (none here today)
            made.append(repr(getattr(lib.nn, name)()))
    assert made[0] == made[1]
