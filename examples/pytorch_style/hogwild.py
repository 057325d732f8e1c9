"""Hogwild (Recht et al., 2011), as PyTorch's mnist_hogwild example trains: the model's
parameters moved to shared memory with `model.share_memory()`, then worker processes,
each with its own optimizer and no lock, step the same weights at once; the main process
evaluates what they wrote.

Run it: `python examples/pytorch_style/hogwild.py`. On PyTorch, change the imports only.
"""

import numpy as np

import lamina as torch
import lamina.multiprocessing as mp
import lamina.nn as nn
import lamina.nn.functional as F

FEATURES, CLASSES, BATCH = 20, 4, 32


def make_data(n=1024, seed=0):
    """Four Gaussian blobs in 20 dimensions."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 1.5, (CLASSES, FEATURES))
    y = rng.integers(0, CLASSES, n)
    x = centers[y] + rng.normal(0, 1.0, (n, FEATURES))
    return x.astype(np.float32), y.astype(np.int64)


def build():
    return {"model": nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, CLASSES))}


def work(rank, workers, model, data, batches):
    """One worker's share of an epoch: every `workers`-th batch, from batch `rank` on."""
    xs, ys = data
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    for b in range(rank, batches, workers):
        x = torch.tensor(xs[b * BATCH:(b + 1) * BATCH])
        y = torch.tensor(ys[b * BATCH:(b + 1) * BATCH])
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


def evaluate(model, data):
    with torch.no_grad():
        return F.cross_entropy(model(torch.tensor(data[0])), torch.tensor(data[1])).item()


def train(models, data, steps=8, workers=1, batches=8):
    """`steps` epochs of `batches` batches, each split over `workers` processes running at
    once; the loss on all the data after each. One worker makes the run deterministic
    (what the test compares across frameworks); several race, as Hogwild does."""
    model = models["model"]
    model.share_memory()  # gradients are allocated lazily, so they are not shared here
    # spawn: fresh workers that get the weights' shared memory, not a forked copy of this
    # process (whose BLAS threads a forked child may wait on forever)
    context = mp.get_context("spawn")
    losses = []
    for _ in range(steps):
        processes = [context.Process(target=work, args=(rank, workers, model, data, batches))
                     for rank in range(workers)]
        for p in processes:
            p.start()
        for p in processes:
            p.join()
            if p.exitcode != 0:
                raise RuntimeError(f"a worker failed with exit code {p.exitcode}")
        losses.append(evaluate(model, data))
    return losses


def main():
    torch.manual_seed(0)
    data = make_data()
    models = build()
    first = evaluate(models["model"], data)
    losses = train(models, data, steps=10, workers=2, batches=32)
    print(f"loss before {first:.3f}, after each epoch of two workers: "
          + " ".join(f"{loss:.3f}" for loss in losses))


if __name__ == "__main__":
    main()
