"""MAML (Finn et al., 2017) on sine-wave regression, PyTorch style: an inner SGD step
taken with `torch.func.functional_call` on gradients from `torch.autograd.grad(...,
create_graph=True)`, and the outer loss differentiated through that step (second
order) back to the shared initial weights.

Run it: `python examples/pytorch_style/maml.py`. On PyTorch, change the imports only.
"""

import numpy as np

import lamina as torch
import lamina.nn as nn
import lamina.nn.functional as F

TASKS, SHOTS, INNER_LR = 4, 10, 0.01


def make_data(steps=60, seed=0):
    """Per step and task: support and query points of y = a sin(x - phase)."""
    rng = np.random.default_rng(seed)
    amplitude = rng.uniform(0.1, 5.0, (steps, TASKS, 1, 1))
    phase = rng.uniform(0, np.pi, (steps, TASKS, 1, 1))
    x = rng.uniform(-5, 5, (steps, TASKS, 2 * SHOTS, 1))
    y = amplitude * np.sin(x - phase)
    return x.astype(np.float32), y.astype(np.float32)


def build():
    return {"model": nn.Sequential(nn.Linear(1, 40), nn.ReLU(), nn.Linear(40, 40), nn.ReLU(),
                                   nn.Linear(40, 1))}


def adapted(model, params, x, y):
    """The parameters after one inner SGD step on (x, y), still a function of params."""
    loss = F.mse_loss(torch.func.functional_call(model, params, (x,)), y)
    grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
    return {name: p - INNER_LR * g for (name, p), g in zip(params.items(), grads)}


def train(models, data, steps=10):
    model = models["model"]
    xs, ys = data
    meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for step in range(steps):
        meta_opt.zero_grad()
        params = dict(model.named_parameters())
        meta_loss = 0.0
        for task in range(TASKS):
            x, y = torch.tensor(xs[step, task]), torch.tensor(ys[step, task])
            fast = adapted(model, params, x[:SHOTS], y[:SHOTS])
            query = torch.func.functional_call(model, fast, (x[SHOTS:],))
            meta_loss = meta_loss + F.mse_loss(query, y[SHOTS:])
        (meta_loss / TASKS).backward()
        meta_opt.step()
        losses.append(meta_loss.item() / TASKS)
    return losses


def main():
    torch.manual_seed(0)
    models = build()
    losses = train(models, make_data(steps=200), steps=200)
    print(f"meta loss: first 10 steps {np.mean(losses[:10]):.3f}, "
          f"last 10 {np.mean(losses[-10:]):.3f}")


if __name__ == "__main__":
    main()
