"""A whole node lost mid-run: a Ray cluster of three nodes (separate raylets on this
machine, ray.cluster_utils), joined by address; the node holding a worker and a server
shard is killed in epoch 0. Its actors restart on the surviving nodes, and the run ends
with the weights of the uninterrupted run, bit for bit: every version applied once."""

from __future__ import annotations

import os

import pytest
from ps_helpers import assert_identical, exact_job, train_epochs, wait_for_version

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning")]


@pytest.fixture(scope="module")
def three_nodes(tmp_path_factory):
    from ray.cluster_utils import Cluster

    if ray.is_initialized():  # another module's cluster
        ray.shutdown()
    os.environ["RAY_TMPDIR"] = str(tmp_path_factory.mktemp("k", numbered=True))[:40]
    node = {"num_cpus": 1, "object_store_memory": 128 * 2**20, "node_ip_address": "127.0.0.1"}
    # A lost node is noticed after 4 missed health checks half a second apart (Ray's
    # default takes about 30 s).
    fast = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
            "health_check_failure_threshold": 4}
    cluster = Cluster(initialize_head=True, head_node_args={
        **node, "include_dashboard": False, "_system_config": fast})
    for _ in range(2):
        cluster.add_node(**node)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def _node_of(actor):
    return ray.get(actor.__ray_call__.remote(lambda _: ray.get_runtime_context().get_node_id()))


def test_a_node_killed_mid_run_loses_nothing(three_nodes, tmp_path) -> None:
    from lamina.distributed import init

    init(address=three_nodes.address)
    job = exact_job(tmp_path, address=three_nodes.address, checkpoint_every=1)
    want, _ = train_epochs(job, str(tmp_path / "a"))
    seen = {}

    def placed(cluster):  # before the epochs: an actor answers between its calls
        at = {a: _node_of(a) for a in [*cluster.workers, *cluster.servers]}
        # a node other than the head (where the driver runs) holding actors
        victim = next(n for n in three_nodes.list_all_nodes()
                      if n is not three_nodes.head_node and n.node_id in at.values())
        seen.update(victim=victim, lost=[a for a, node in at.items() if node == victim.node_id],
                    workers={a for a in cluster.workers if at[a] == victim.node_id},
                    servers={a for a in cluster.servers if at[a] == victim.node_id})

    def kill(cluster):
        assert wait_for_version(cluster, 20) < 80  # inside the 80 steps of epoch 0
        three_nodes.remove_node(seen["victim"], allow_graceful=False)

    def moved(cluster):  # after epoch 0, the cluster still up
        seen["now"] = [_node_of(a) for a in seen["lost"]]

    got, _ = train_epochs(job, str(tmp_path / "b"), kill=kill, between=moved, ready=placed)
    assert seen["workers"] and seen["servers"]  # the node held a worker and a server shard
    alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]}
    assert seen["victim"].node_id not in alive and len(alive) == 2
    assert set(seen["now"]) <= alive  # restarted on the surviving nodes
    assert assert_identical(got, want) is None
