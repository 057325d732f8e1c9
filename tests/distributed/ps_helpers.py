"""Helpers the distributed tests share: waiting for the servers' progress, and the
single-process training a BSP run must equal."""

from __future__ import annotations

import time

import numpy as np

import lamina as lm
import lamina.functions as F
from lamina.data import ArrayDataset, DataLoader


def wait_for_version(cluster, at_least: int, timeout: float = 60, poll: float = 0.01) -> int:
    """Block until every server shard reaches `at_least` versions; return the lowest."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        version = min(s["version"] for s in cluster.stats())
        if version >= at_least:
            return version
        time.sleep(poll)
    raise AssertionError(f"no progress to version {at_least} in {timeout}s")


def train_on_concatenated_batches(model, optimizer, x, y, batch: int = 16, workers: int = 2,
                                  seed: int = 0, epochs: int = 1) -> None:
    """What BSP with `workers` workers computes, in one process: each step's batch is every
    worker's shard batch side by side, the loss their mean."""
    loader = DataLoader(ArrayDataset(x, y), batch, shuffle=True, seed=seed)
    per_worker = len(x) // workers
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        order = loader.order()
        shards = [order[w * per_worker:(w + 1) * per_worker] for w in range(workers)]
        for b in range(per_worker // batch):
            idx = np.concatenate([s[b * batch:(b + 1) * batch] for s in shards])
            F.cross_entropy(model(lm.tensor(x[idx])), y[idx]).backward()
            optimizer.step()
            optimizer.zero_grad()
