"""Saving a checkpoint and resuming from it, PyTorch style: the model's and optimizer's
state dicts with the epoch in one file (`torch.save`, here `lamina.save`, which writes
safetensors and JSON, never a pickle), loaded into fresh objects (`load(...,
weights_only=True)`), and training goes on exactly as if it had not stopped.

Run it: `python examples/pytorch_style/save_resume.py`. On PyTorch, change the imports
only.
"""

import os
import tempfile

import numpy as np

import lamina as torch
import lamina.nn as nn


def make_data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 6)).astype(np.float32)
    y = (x @ rng.standard_normal((6, 3)) > 0).astype(np.float32)
    return x, y


def build():
    return {"model": nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3))}


def fit(model, optimizer, scheduler, data, first, last):
    x, y = torch.tensor(data[0]), torch.tensor(data[1])
    losses = []
    for _ in range(first, last):
        optimizer.zero_grad()
        loss = nn.functional.binary_cross_entropy_with_logits(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses


def make_optimizer(model):
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.01)
    return optimizer, torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)


def train(models, data, steps=6):
    """Half the steps, a checkpoint, fresh objects loaded from it, the other half."""
    model = models["model"]
    optimizer, scheduler = make_optimizer(model)
    losses = fit(model, optimizer, scheduler, data, 0, steps // 2)
    path = os.path.join(tempfile.mkdtemp(), "checkpoint.pt")
    torch.save({"epoch": steps // 2, "model": model.state_dict(),
                "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()},
               path)

    checkpoint = torch.load(path, weights_only=True)
    resumed = build()["model"]
    resumed.load_state_dict(checkpoint["model"])
    optimizer, scheduler = make_optimizer(resumed)
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    losses += fit(resumed, optimizer, scheduler, data, checkpoint["epoch"], steps)
    models["model"] = resumed
    return losses


def main():
    torch.manual_seed(0)
    data = make_data()
    resumed = train(build(), data, steps=10)
    torch.manual_seed(0)
    model = build()["model"]
    optimizer, scheduler = make_optimizer(model)
    straight = fit(model, optimizer, scheduler, data, 0, 10)
    print(f"resumed {resumed[-1]:.6f}, uninterrupted {straight[-1]:.6f}: "
          f"{'the same' if np.allclose(resumed, straight, rtol=0, atol=0) else 'different'}")


if __name__ == "__main__":
    main()
