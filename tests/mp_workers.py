"""Functions the multiprocessing tests run in worker processes, the same code for lamina
and PyTorch (`fw` names the library). A module of its own: a spawned worker imports it,
and with it only what these functions need."""

from __future__ import annotations

import importlib

import numpy as np

import lamina


def lib(fw: str):
    return importlib.import_module(fw)


def sgd_steps(model, fw: str, steps: int = 3) -> None:
    """`steps` SGD steps with momentum on fixed data, the model's weights updated in place."""
    t = lib(fw)
    optim = importlib.import_module(f"{fw}.optim")
    rng = np.random.default_rng(5)
    x = t.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    y = t.tensor(rng.standard_normal((8, 3)).astype(np.float32))
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()


def fill_row(i: int, shared, fw: str) -> None:
    """Write i + 1 into row i of a shared tensor, in place."""
    with lib(fw).no_grad():
        shared[i] += i + 1


def add_through_queue(queue, done, fw: str) -> None:
    """Take a tensor from the queue, add 10 to it in place, say so."""
    x = queue.get()
    with lib(fw).no_grad():
        x += 10
    done.put(bool(x.is_shared()))


def fail(i: int) -> None:
    if i == 1:
        raise ValueError("worker 1 fails on purpose")


def pool_sum(queue) -> None:
    """Two tasks on lamina's thread pool, from a forked child."""
    from lamina import parallel

    queue.put(sum(parallel.run_all([lambda: 3, lambda: 4])))


class SharedAdam(lamina.optim.Adam):
    """A3C's optimizer: Adam whose moments are made, and put in shared memory, up front."""

    def __init__(self, params, lr=1e-3):
        super().__init__(params, lr=lr)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = lamina.zeros(1).share_memory_()
                state["exp_avg"] = lamina.zeros_like(p.data).share_memory_()
                state["exp_avg_sq"] = lamina.zeros_like(p.data).share_memory_()


def adam_steps(model, optimizer, steps: int = 2) -> None:
    """A3C's worker, its gradients computed on the shared model itself."""
    x = lamina.tensor(np.random.default_rng(7).standard_normal((8, 4)).astype(np.float32))
    for _ in range(steps):
        optimizer.zero_grad()
        (model(x) ** 2).mean().backward()
        optimizer.step()
