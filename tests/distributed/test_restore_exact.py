"""A BSP run that loses a worker mid-epoch, loses a server, or has its driver stopped and
resumed gives the uninterrupted run's weights bit for bit (Adam, batch norm, dropout)."""

from __future__ import annotations

import pytest
from ps_helpers import assert_identical, exact_job, train_epochs, wait_for_version

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning")]


def test_a_worker_killed_mid_epoch_changes_no_weight(cluster_env, tmp_path, capfd) -> None:
    job = exact_job(tmp_path)
    want, _ = train_epochs(job)

    def kill(cluster):
        assert wait_for_version(cluster, 20) < 80  # inside the 80 steps of epoch 0
        ray.kill(cluster.workers[1], no_restart=False)

    got, (before, after) = train_epochs(job, kill=kill)
    assert after[1] != before[1] and after[0] == before[0]  # worker 1 really restarted
    assert_identical(got, want)
    assert "not bit-exact" not in capfd.readouterr().err


def test_a_worker_killed_between_epochs_changes_no_weight(cluster_env, tmp_path) -> None:
    """It restarts with the epoch's averaged batch-norm statistics (num_batches_tracked
    included), not fresh ones."""
    job = exact_job(tmp_path)
    want, _ = train_epochs(job)

    def kill(cluster):
        ray.kill(cluster.workers[1], no_restart=False)

    got, (before, after) = train_epochs(job, between=kill)
    assert after[1] != before[1]
    assert_identical(got, want)


def test_a_killed_server_changes_no_weight(cluster_env, tmp_path) -> None:
    job = exact_job(tmp_path, checkpoint_every=1)  # a restored shard loses no version
    want, _ = train_epochs(job, str(tmp_path / "a"))

    def kill(cluster):
        assert wait_for_version(cluster, 20) < 80
        ray.kill(cluster.servers[0], no_restart=False)

    got, (before, after) = train_epochs(job, str(tmp_path / "b"), kill=kill)
    assert after[2]["restored"] and after[2]["pid"] != before[2]["pid"]
    assert_identical(got, want)


def test_a_driver_stopped_and_resumed_changes_no_weight(cluster_env, tmp_path) -> None:
    from dataclasses import replace

    from lamina.jobs import train

    job = exact_job(tmp_path)
    full, _ = train(replace(job, name="full"))
    cut = replace(job, name="cut", trainer=replace(job.trainer, epochs=1))
    train(cut)
    resumed, _ = train(replace(cut, trainer=replace(cut.trainer, epochs=2)), resume=True)
    assert_identical(resumed.model.state_dict(), full.model.state_dict())
