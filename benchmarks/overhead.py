"""Python overhead per op, and one MLP training step, beside PyTorch in the same run.

    python benchmarks/overhead.py [--threads 2] [--repeats 20]

Prints the median time of
  * a chain of 10,000 small elementwise ops (forward + backward), per op;
  * a 784-1024-1024-10 MLP step at batch 128 (forward, cross-entropy, backward, SGD update);
for lamina and, where installed, PyTorch, with the ratio lamina / PyTorch.

Each framework runs in its own process, so neither pays for the other's imports: with
torch imported, Python's garbage collector walks ~150,000 more objects on every full
collection, which alone makes lamina's per-op time ~2x slower.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import import_torch, median_seconds, pin_threads, run_isolated  # noqa: E402

CHAIN = 10_000


def lamina_chain() -> Callable[[], object]:
    import numpy as np

    import lamina as lm

    x = lm.tensor(np.ones(16, dtype=np.float32), requires_grad=True)

    def step() -> None:
        y = x
        for _ in range(CHAIN // 2):
            y = (y * 1.0001) + 0.0001
        y.sum().backward()
        x.grad = None

    return step


def torch_chain() -> Callable[[], object]:
    import torch

    x = torch.ones(16, requires_grad=True)

    def step() -> None:
        y = x
        for _ in range(CHAIN // 2):
            y = (y * 1.0001) + 0.0001
        y.sum().backward()
        x.grad = None

    return step


def mlp_data():
    import numpy as np

    rng = np.random.default_rng(0)
    sizes = [784, 1024, 1024, 10]
    weights = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        weights.append(rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32))
        weights.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = rng.integers(0, 10, 128)
    return weights, x, y


def lamina_mlp() -> Callable[[], object]:
    import lamina as lm
    import lamina.functions as F

    weights, xa, ya = mlp_data()
    params = [lm.tensor(w, requires_grad=True) for w in weights]
    x, y = lm.tensor(xa), lm.tensor(ya)
    velocity = [None] * len(params)

    def step() -> float:
        h = x
        for i in range(0, len(params), 2):
            h = F.linear(h, params[i], params[i + 1])
            if i < len(params) - 2:
                h = F.relu(h)
        loss = F.cross_entropy(h, y)
        loss.backward()
        for i, p in enumerate(params):  # SGD, momentum 0.9, lr 0.01 (PyTorch's rule)
            v = p.grad if velocity[i] is None else velocity[i] * 0.9 + p.grad
            velocity[i] = v
            p.array -= 0.01 * v
            p.grad = None
        return loss.item()

    return step


def torch_mlp() -> Callable[[], object]:
    import torch
    import torch.nn.functional as tF

    weights, xa, ya = mlp_data()
    params = [torch.tensor(w, requires_grad=True) for w in weights]
    x, y = torch.tensor(xa), torch.tensor(ya)
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)

    def step() -> float:
        h = x
        for i in range(0, len(params), 2):
            h = tF.linear(h, params[i], params[i + 1])
            if i < len(params) - 2:
                h = tF.relu(h)
        loss = tF.cross_entropy(h, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step


def measure(framework: str, repeats: int) -> dict[str, float]:
    """Median times of both workloads for one framework, in this process."""
    chain, mlp = {"lamina": (lamina_chain, lamina_mlp), "torch": (torch_chain, torch_mlp)}[
        framework]
    return {"chain_us_per_op": median_seconds(chain(), repeats) * 1e6 / CHAIN,
            "mlp_ms": median_seconds(mlp(), repeats) * 1e3}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", choices=["lamina", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    pin_threads(args.threads)
    if args.only:
        if args.only == "torch":
            import_torch(args.threads)
        print(json.dumps(measure(args.only, args.repeats)))
        return
    def isolated(framework: str) -> dict | None:
        return run_isolated(__file__, ["--only", framework, "--threads", str(args.threads),
                                       "--repeats", str(args.repeats)], args.threads,
                            optional_torch=framework == "torch")

    ours, theirs = isolated("lamina"), isolated("torch")
    print(f"threads={args.threads} repeats={args.repeats} (each framework in its own process)")
    print(f"{'workload':45s} {'lamina':>10s} {'pytorch':>10s} {'ratio':>7s}")
    rows = [("elementwise chain, per op (us)", "chain_us_per_op"),
            ("MLP 784-1024-1024-10 step, batch 128 (ms)", "mlp_ms")]
    for name, key in rows:
        if theirs is None:
            print(f"{name:45s} {ours[key]:10.2f} {'-':>10s} {'-':>7s}")
        else:
            print(f"{name:45s} {ours[key]:10.2f} {theirs[key]:10.2f} "
                  f"{ours[key] / theirs[key]:7.2f}")


if __name__ == "__main__":
    main()
