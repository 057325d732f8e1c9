"""A BSP run that loses a worker mid-epoch, loses a server, or has its driver stopped and
resumed gives the uninterrupted run's weights bit for bit (Adam, batch norm, dropout)."""

from __future__ import annotations

import numpy as np
import pytest
from ps_helpers import wait_for_version

from lamina.train.jobfile import validate

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning")]


def _job(tmp_path, n=2560, epochs=2, **dist):
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


def _train(job, checkpoint_dir=None, kill=None, between=None):
    """Two epochs on a fresh cluster; `kill(cluster)` runs during epoch 0, `between(cluster)`
    after it (its statistics averaged). Returns the driver's state dict after the last
    epoch (parameters and averaged buffers), and the actors' pids before and after."""
    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    model = build_model(job)
    cluster = Cluster.for_job(job, model, checkpoint_dir)

    def pids():
        return ray.get([a.pid.remote() for a in cluster.workers] +
                       [s.stats.remote() for s in cluster.servers])

    try:
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


def _assert_identical(got, want):
    assert got.keys() == want.keys()
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)


def test_a_worker_killed_mid_epoch_changes_no_weight(cluster_env, tmp_path, capfd) -> None:
    job = _job(tmp_path)
    want, _ = _train(job)

    def kill(cluster):
        assert wait_for_version(cluster, 20) < 80  # inside the 80 steps of epoch 0
        ray.kill(cluster.workers[1], no_restart=False)

    got, (before, after) = _train(job, kill=kill)
    assert after[1] != before[1] and after[0] == before[0]  # worker 1 really restarted
    _assert_identical(got, want)
    assert "not bit-exact" not in capfd.readouterr().err


def test_a_worker_killed_between_epochs_changes_no_weight(cluster_env, tmp_path) -> None:
    """It restarts with the epoch's averaged batch-norm statistics (num_batches_tracked
    included), not fresh ones."""
    job = _job(tmp_path)
    want, _ = _train(job)

    def kill(cluster):
        ray.kill(cluster.workers[1], no_restart=False)

    got, (before, after) = _train(job, between=kill)
    assert after[1] != before[1]
    _assert_identical(got, want)


def test_a_killed_server_changes_no_weight(cluster_env, tmp_path) -> None:
    job = _job(tmp_path, checkpoint_every=1)  # a restored shard loses no version
    want, _ = _train(job, str(tmp_path / "a"))

    def kill(cluster):
        assert wait_for_version(cluster, 20) < 80
        ray.kill(cluster.servers[0], no_restart=False)

    got, (before, after) = _train(job, str(tmp_path / "b"), kill=kill)
    assert after[2]["restored"] and after[2]["pid"] != before[2]["pid"]
    _assert_identical(got, want)


def test_a_driver_stopped_and_resumed_changes_no_weight(cluster_env, tmp_path) -> None:
    from dataclasses import replace

    from lamina.jobs import train

    job = _job(tmp_path)
    full, _ = train(replace(job, name="full"))
    cut = replace(job, name="cut", trainer=replace(job.trainer, epochs=1))
    train(cut)
    resumed, _ = train(replace(cut, trainer=replace(cut.trainer, epochs=2)), resume=True)
    _assert_identical(resumed.model.state_dict(), full.model.state_dict())
