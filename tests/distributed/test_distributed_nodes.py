"""A job joining a running Ray cluster of two nodes (`distributed.address`), as on real
machines: here both nodes are separate raylets on this machine (ray.cluster_utils)."""

from __future__ import annotations

import os

import numpy as np
import pytest

import lamina as lm
from lamina.jobs import train
from lamina.train.jobfile import validate

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning")]


@pytest.fixture(scope="module")
def two_nodes(tmp_path_factory):
    from ray.cluster_utils import Cluster

    if ray.is_initialized():  # another module's local cluster
        ray.shutdown()
    os.environ["RAY_TMPDIR"] = str(tmp_path_factory.mktemp("n", numbered=True))[:40]
    node = {"num_cpus": 1, "object_store_memory": 256 * 2**20, "node_ip_address": "127.0.0.1"}
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    cluster.add_node(**node)
    yield cluster.address
    ray.shutdown()
    cluster.shutdown()


def _config(tmp_path, address):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((640, 8)).astype(np.float32)
    y = (x[:, :2].sum(axis=1) > 0).astype(np.int64) + 2 * (x[:, 2] > 0)
    np.savez(tmp_path / "d.npz", x=x, y=y, x_test=x[:128], y_test=y[:128])
    return validate({
        "name": "nodes",
        "data": {"name": "npz", "path": str(tmp_path / "d.npz"), "batch_size": 16},
        "model": {"type": "Sequential", "layers": [
            {"type": "Linear", "in_features": 8, "out_features": 16}, {"type": "Tanh"},
            {"type": "Linear", "in_features": 16, "out_features": 4}]},
        "optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9},
        "trainer": {"epochs": 3, "seed": 0, "progress": False, "out_dir": str(tmp_path)},
        "distributed": {"workers": 2, "servers": 2, "address": address, "timeout": 20},
    })


def test_a_job_joins_a_running_two_node_cluster_and_trains(two_nodes, tmp_path):
    run, scores = train(_config(tmp_path, two_nodes))
    assert len(ray.nodes()) == 2  # joined the running cluster, did not start its own
    assert scores["accuracy"] > 0.8
    saved = lm.io.read(tmp_path / "nodes" / "checkpoints" / "last.safetensors")[0]
    np.testing.assert_array_equal(saved["0.weight"], run.model[0].weight.array)
    servers = sorted(p.name for p in (tmp_path / "nodes" / "checkpoints" / "servers").iterdir())
    assert servers == [f"server-{i}{at}.safetensors" for i in (0, 1)  # and as of the last
                       for at in (".epoch-2", ".epoch-3", "")]  # two epochs' ends


def _nodes(actors):
    """The nodes these actors run on."""
    return set(ray.get([a.__ray_call__.remote(
        lambda _: ray.get_runtime_context().get_node_id()) for a in actors]))


def test_workers_servers_and_pipeline_stages_are_spread_over_the_nodes(two_nodes, tmp_path):
    import lamina.nn as nn
    from lamina.distributed import Cluster, Pipeline, init
    from lamina.train.job import build_model

    config = _config(tmp_path, two_nodes)
    init(address=two_nodes)
    cluster = Cluster.for_job(config, build_model(config), None)
    try:
        assert len(_nodes(cluster.workers)) == 2
        assert len(_nodes(cluster.servers)) == 2
    finally:
        cluster.shutdown()
    pipe = Pipeline(nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2)), cuts=[2])
    try:
        assert len(_nodes(pipe.stages)) == 2
    finally:
        pipe.shutdown()


def test_the_command_line_joins_the_cluster_by_address(two_nodes, tmp_path):
    """`lamina train JOB.yaml --address HOST:PORT`, as the docs tell a cluster's user."""
    import subprocess
    import sys

    import yaml

    job = _config(tmp_path, None).to_dict()
    job["distributed"].pop("address")
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, "-m", "lamina.cli", "train", "job.yaml",
                           "--address", two_nodes, "--set", "trainer.epochs=1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Connecting to existing Ray cluster" in proc.stderr
    assert (tmp_path / "nodes" / "checkpoints" / "last.safetensors").exists()
