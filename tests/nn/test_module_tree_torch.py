"""A module registered twice (a shared layer): children, named_children and apply list it
once, as PyTorch's do, while Sequential runs it at each place."""

from __future__ import annotations

import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def test_a_shared_layer_is_one_child_and_runs_twice() -> None:
    results = []
    for lib in (lamina, torch):
        shared = lib.nn.Linear(1, 1)
        with lib.no_grad():
            shared.weight.fill_(2.0)
            shared.bias.fill_(0.0)
        net = lib.nn.Sequential(shared, lib.nn.ReLU(), shared)
        visited = []
        net.apply(lambda m, visited=visited: visited.append(type(m).__name__))
        results.append((visited, [n for n, _ in net.named_children()],
                        len(list(net.children())), len(net), len(list(net.modules())),
                        len(list(net.named_modules(remove_duplicate=False))),
                        net(lib.ones(1, 1)).item()))
    assert results[0] == results[1] == (["Linear", "ReLU", "Sequential"], ["0", "1"], 2, 3,
                                        3, 4, 4.0)
