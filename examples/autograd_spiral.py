"""Train a tiny two-layer network on two interleaved spirals with lamina's autograd alone.

    python examples/autograd_spiral.py

No layers, no optimizer classes: tensors, functions and backward, to show the core.
The loss printed every 200 steps falls from ~0.69 towards 0.
"""

from __future__ import annotations

import numpy as np

import lamina as lm
import lamina.functions as F


def spirals(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    t = np.sqrt(rng.uniform(0, 1, n)) * 3 * np.pi
    arm = rng.integers(0, 2, n)
    r = t / (3 * np.pi)
    angle = t + arm * np.pi
    x = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)
    x += rng.normal(0, 0.02, x.shape)
    return x.astype(np.float32), arm


def main() -> None:
    lm.manual_seed(0)
    rng = np.random.default_rng(0)
    x, y = spirals(512, rng)
    x, y = lm.tensor(x), lm.tensor(y)
    hidden = 64
    W1 = lm.tensor(rng.normal(0, 4.0, (hidden, 2)).astype(np.float32), requires_grad=True)
    b1 = lm.tensor(np.zeros(hidden, np.float32), requires_grad=True)
    W2 = lm.tensor(rng.normal(0, 0.1, (2, hidden)).astype(np.float32), requires_grad=True)
    b2 = lm.tensor(np.zeros(2, np.float32), requires_grad=True)
    params = [W1, b1, W2, b2]
    lr = 0.2
    for step in range(1, 2001):
        logits = F.linear(F.tanh(F.linear(x, W1, b1)), W2, b2)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        for p in params:
            p.array -= lr * p.grad
            p.grad = None
        if step % 200 == 0:
            accuracy = (logits.array.argmax(axis=1) == y.array).mean()
            print(f"step {step:4d}  loss {loss.item():.4f}  accuracy {accuracy:.3f}")


if __name__ == "__main__":
    main()
