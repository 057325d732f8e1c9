"""Helpers the distributed tests share: waiting for the servers' progress, the
single-process training a BSP run must equal, and the job and epoch loop of the exact
restore tests (a killed worker, server or node)."""

from __future__ import annotations

import time

import numpy as np

import lamina as lm
import lamina.functions as F
from lamina.data import ArrayDataset, DataLoader
from lamina.train.jobfile import validate


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


def exact_job(tmp_path, n=2560, epochs=2, **dist):
    """A BSP job whose weights a restore must give back bit for bit: Adam, batch norm and
    dropout, 2 workers and 2 servers; `dist` adds to its distributed section."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 8)).astype(np.float32)
    y = (x[:, :2].sum(axis=1) > 0).astype(np.int64) + 2 * (x[:, 2] > 0)
    np.savez(tmp_path / "d.npz", x=x, y=y, x_test=x[:128], y_test=y[:128])
    return validate({
        "name": "exact",
        "data": {"name": "npz", "path": str(tmp_path / "d.npz"), "batch_size": 16,
                 "val_fraction": 0.0},
        "model": {"type": "Sequential", "layers": [
            {"type": "Linear", "in_features": 8, "out_features": 16},
            {"type": "BatchNorm1d", "num_features": 16}, {"type": "Tanh"},
            {"type": "Dropout", "p": 0.2},
            {"type": "Linear", "in_features": 16, "out_features": 4}]},
        "optimizer": {"type": "Adam", "lr": 0.01},
        "trainer": {"epochs": epochs, "seed": 0, "progress": False, "tensorboard": False,
                    "out_dir": str(tmp_path / "runs")},
        "distributed": {"workers": 2, "servers": 2, "mode": "bsp", "timeout": 90, **dist},
    })


def train_epochs(job, checkpoint_dir=None, kill=None, between=None, ready=None):
    """The job's epochs on a fresh cluster; `ready(cluster)` runs before them, `kill(cluster)`
    during epoch 0, `between(cluster)` after it (its statistics averaged). Returns the driver's state dict after the last
    epoch (parameters and averaged buffers), and the actors' pids before and after."""
    import ray

    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    model = build_model(job)
    cluster = Cluster.for_job(job, model, checkpoint_dir)

    def pids():
        return ray.get([a.pid.remote() for a in cluster.workers] +
                       [s.stats.remote() for s in cluster.servers])

    try:
        if ready is not None:
            ready(cluster)
        before = pids()
        for epoch in range(job.trainer.epochs):
            futures = [w.train_epoch.remote(epoch) for w in cluster.workers]
            if epoch == 0 and kill is not None:
                kill(cluster)
            ray.get(futures, timeout=180)
            cluster.pull_into(model)
            cluster.sync_buffers(model)
            if epoch == 0 and between is not None:
                between(cluster)
        after = pids()
        return {k: v.copy() for k, v in model.state_dict().items()}, (before, after)
    finally:
        cluster.shutdown()


def assert_identical(got, want):
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
