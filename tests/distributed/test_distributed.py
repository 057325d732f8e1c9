"""Distributed training on a real local Ray cluster (started once for this module)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from ps_helpers import train_on_concatenated_batches, wait_for_version

import lamina as lm
import lamina.functions as F
import lamina.nn as nn
from lamina.train.jobfile import validate

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::ResourceWarning")]


def _data(tmp_path, n=640, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 8)).astype(np.float32)
    y = (x[:, :2].sum(axis=1) > 0).astype(np.int64) + 2 * (x[:, 2] > 0)
    path = tmp_path / "d.npz"
    np.savez(path, x=x, y=y, x_test=x[:128], y_test=y[:128])
    return str(path), x, y


def _job(path, mode="bsp", workers=2, servers=2, epochs=2, **dist):
    return validate({
        "name": "dist",
        "data": {"name": "npz", "path": path, "batch_size": 16, "shuffle": True,
                 "val_fraction": 0.0},  # the tests compare against training on all of x
        "model": {"type": "Sequential", "layers": [
            {"type": "Linear", "in_features": 8, "out_features": 16}, {"type": "Tanh"},
            {"type": "Linear", "in_features": 16, "out_features": 4}]},
        "optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9},
        "trainer": {"epochs": epochs, "seed": 0, "progress": False},
        "distributed": {"workers": workers, "servers": servers, "mode": mode, "timeout": 20,
                        **dist},
    })


def _run(config, epochs, checkpoint_dir=None):
    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    model = build_model(config)
    cluster = Cluster.for_job(config, model, checkpoint_dir)
    try:
        for e in range(epochs):
            cluster.train_epoch(e)
        cluster.pull_into(model)
        return model, cluster.stats()
    finally:
        cluster.shutdown()


@pytest.mark.parametrize("groups", [None, [{"params": ["*.bias"], "momentum": 0.0}]],
                         ids=["one group", "groups"])
def test_bsp_equals_single_process_training_on_the_concatenated_batch(cluster_env, tmp_path,
                                                                      groups):
    path, x, y = _data(tmp_path)
    config = _job(path)
    if groups:  # each server shard builds the groups its parameters fall in
        config.optimizer.groups = groups
    model, stats = _run(config, epochs=1)
    assert [s["version"] for s in stats] == [20, 20]  # 320 samples a worker, batches of 16

    from lamina.train.job import build_model

    local = build_model(config)
    train_on_concatenated_batches(local, config.optimizer.build(local.named_parameters()), x, y)
    for (n, p), (_, q) in zip(model.named_parameters(), local.named_parameters()):
        np.testing.assert_allclose(p.array, q.array, rtol=1e-6, atol=1e-7, err_msg=n)


def test_bsp_runs_are_bit_identical(cluster_env, tmp_path):
    path, _, _ = _data(tmp_path)
    a, _ = _run(_job(path), epochs=1)
    b, _ = _run(_job(path), epochs=1)
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_array_equal(p.array, q.array, err_msg=n)


def test_ssp_never_lets_a_worker_run_more_than_s_ahead(cluster_env, tmp_path):
    path, _, _ = _data(tmp_path)
    _, stats = _run(_job(path, mode="ssp", staleness=1), epochs=2)
    log = [entry for s in stats for entry in s["log"]]
    assert len(log) >= 80
    assert max(clock - slowest for _, clock, slowest in log) <= 1


def test_asp_converges(cluster_env, tmp_path):
    path, x, y = _data(tmp_path)
    config = _job(path, mode="asp", epochs=4)
    from lamina.train.job import build_model

    before = F.cross_entropy(build_model(config)(lm.tensor(x)), y).item()
    model, stats = _run(config, epochs=4)
    after = F.cross_entropy(model(lm.tensor(x)), y).item()
    assert sum(stats[0]["pushes"].values()) == 160  # 4 epochs x 2 workers x 20: each once
    assert after < 0.5 * before


def _kill_worker_1_mid_epoch(cluster, at_version, steps):
    """Run epoch 0, kill worker 1 (Ray restarts it) once the servers reach `at_version`,
    and wait for the epoch to end."""
    pid = ray.get(cluster.workers[1].pid.remote())
    futures = [w.train_epoch.remote(0) for w in cluster.workers]
    killed_at = wait_for_version(cluster, at_version)
    ray.kill(cluster.workers[1], no_restart=False)
    ray.get(futures, timeout=120)
    assert killed_at < steps, "the kill must land in the middle of the epoch"
    assert ray.get(cluster.workers[1].pid.remote()) != pid  # really restarted


def test_a_killed_worker_restarts_rejoins_and_the_run_completes(cluster_env, tmp_path):
    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    path, x, y = _data(tmp_path, n=5120)  # 160 synchronous steps an epoch
    config = _job(path, epochs=1)
    model = build_model(config)
    cluster = Cluster.for_job(config, model, None)
    try:
        _kill_worker_1_mid_epoch(cluster, at_version=20, steps=160)
        stats = cluster.stats()
        assert [s["version"] for s in stats] == [160, 160]  # no step lost or repeated
        cluster.pull_into(model)
        accuracy = (model(lm.tensor(x)).array.argmax(1) == y).mean()
        assert accuracy > 0.8
    finally:
        cluster.shutdown()


def _text_job(tmp_path, sequences, workers=2, epochs=2, shuffle=True):
    """A character LSTM trained by BPTT: sequences of 16 cut into 4 chunks, one push each."""
    rng = np.random.default_rng(0)
    corpus = "".join(rng.choice(list("abcd efgh."), size=16 * sequences + 1))
    (tmp_path / "corpus.txt").write_text(corpus)
    return validate({
        "name": "bptt",
        "data": {"name": "text", "path": str(tmp_path / "corpus.txt"), "seq_len": 16,
                 "test_fraction": 0.0, "val_fraction": 0.0, "batch_size": 8, "shuffle": shuffle},
        "model": {"type": "Sequential", "layers": [
            {"type": "Embedding", "num_embeddings": 97, "embedding_dim": 8},
            {"type": "LSTM", "batch_first": True, "input_size": 8, "hidden_size": 16, "output": "sequence",
             "stateful": True},
            {"type": "Linear", "in_features": 16, "out_features": 97}]},
        "optimizer": {"type": "SGD", "lr": 0.5},
        "algorithm": {"type": "bptt", "bptt_steps": 4},
        "trainer": {"epochs": epochs, "seed": 0, "progress": False},
        "distributed": {"workers": workers, "servers": 1, "mode": "bsp", "timeout": 20},
    })


def test_bptt_trains_every_epoch_and_equals_local_training(cluster_env, tmp_path):
    """Four pushes a batch (one a chunk): every epoch must still run all its batches, and
    one worker's run must be the local run of the same algorithm, step for step."""
    from lamina.distributed import Cluster
    from lamina.train.algorithms import BPTT
    from lamina.train.job import build_data, build_model
    from lamina.train.updater import LocalUpdater

    config = _text_job(tmp_path, sequences=64, workers=1, shuffle=False)
    model = build_model(config)
    local = build_model(config)
    cluster = Cluster.for_job(config, model, None)
    try:
        seen = [cluster.train_epoch(e)["seen"] for e in range(2)]
        cluster.pull_into(model)
        versions = [s["version"] for s in cluster.stats()]
    finally:
        cluster.shutdown()
    assert seen == [64, 64]
    assert versions == [2 * 8 * 4]  # 2 epochs x 8 batches x 4 chunks

    loader = build_data(config).train
    bptt = BPTT(bptt_steps=4)
    bptt.bind("cross_entropy", [])
    updater = LocalUpdater(local, lm.optim.SGD(local.parameters(), lr=0.5))
    for _ in range(2):
        for batch in loader:
            bptt.train_one_batch(local, batch, updater)
    for (n, p), (_, q) in zip(model.named_parameters(), local.named_parameters()):
        np.testing.assert_allclose(p.array, q.array, rtol=1e-5, atol=1e-6, err_msg=n)


def test_a_worker_killed_between_bptt_chunks_redoes_its_batch_without_repeating_a_push(
        cluster_env, tmp_path):
    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    config = _text_job(tmp_path, sequences=640, epochs=1)  # 40 batches a worker, 160 steps
    cluster = Cluster.for_job(config, build_model(config), None)
    try:
        _kill_worker_1_mid_epoch(cluster, at_version=22, steps=160)
        stats = cluster.stats()[0]
        assert stats["version"] == 160  # no chunk's step lost or repeated
        assert stats["pushes"] == {0: 160, 1: 160}
    finally:
        cluster.shutdown()


def test_a_worker_gone_for_good_is_dropped_and_the_run_goes_on(cluster_env, tmp_path):
    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    path, _, _ = _data(tmp_path, n=5120)
    config = _job(path, epochs=1, timeout=2)
    cluster = Cluster.for_job(config, build_model(config), None)
    try:
        result = {}
        driver = threading.Thread(target=lambda: result.update(cluster.train_epoch(0)))
        driver.start()
        assert wait_for_version(cluster, 20) < 160
        ray.kill(cluster.workers[1], no_restart=True)
        driver.join(timeout=120)
        assert not driver.is_alive() and result["seen"] > 0
        assert cluster.live == [0]
        stats = cluster.stats()
        assert all(s["live"] == [0] for s in stats)  # dropped from every barrier
        assert all(s["version"] >= 150 for s in stats)  # the survivor went on alone
    finally:
        cluster.shutdown()


def test_a_hung_worker_is_stopped_after_timeout_and_the_epoch_ends(cluster_env, tmp_path):
    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    path, _, _ = _data(tmp_path, n=5120)  # 160 batches a worker
    config = _job(path, epochs=1, timeout=2)
    cluster = Cluster.for_job(config, build_model(config), None)

    def hang_after_five_batches(worker):
        batch, calls = worker.algorithm.train_one_batch, []

        def hanging(*args):
            calls.append(1)
            if len(calls) > 5:
                time.sleep(3600)  # alive, but never pushes again
            return batch(*args)

        worker.algorithm.train_one_batch = hanging

    try:
        ray.get(cluster.workers[1].__ray_call__.remote(hang_after_five_batches))
        start = time.monotonic()
        result = cluster.train_epoch(0)
        assert time.monotonic() - start < 60  # not the old bound: timeout x 161 batches
        assert cluster.live == [0]
        assert result["seen"] == 160 * 16  # the survivor trained its whole shard
        assert all(s["live"] == [0] for s in cluster.stats())
    finally:
        cluster.shutdown()


def test_a_killed_server_restores_its_checkpoint_and_the_run_finishes(cluster_env, tmp_path):
    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    path, _, _ = _data(tmp_path, n=5120)
    config = _job(path, epochs=1, checkpoint_every=5)
    cluster = Cluster.for_job(config, build_model(config), str(tmp_path / "servers"))
    try:
        futures = [w.train_epoch.remote(0) for w in cluster.workers]
        assert wait_for_version(cluster, 20) < 160
        ray.kill(cluster.servers[0], no_restart=False)
        results = ray.get(futures, timeout=120)
        assert sum(r["seen"] for r in results) > 0
        stats = cluster.stats()
        assert stats[0]["restored"] and not stats[1]["restored"]
        assert (tmp_path / "servers" / "server-0.safetensors").exists()
    finally:
        cluster.shutdown()


def test_batch_norm_statistics_are_the_workers_average(cluster_env, tmp_path):
    """And a Standardize layer's statistics are the whole training split's on every worker,
    not its shard's."""
    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    path, x, _ = _data(tmp_path)
    config = _job(path, epochs=1)
    config.model["layers"][:1] = [{"type": "Standardize", "num_features": 8},
                                  config.model["layers"][0],
                                  {"type": "BatchNorm1d", "num_features": 16}]
    model = build_model(config)  # unadapted: the driver trains nothing itself
    cluster = Cluster.for_job(config, model, None)
    try:
        cluster.train_epoch(0)
        before = ray.get([w.buffers.remote() for w in cluster.workers])
        assert not np.allclose(before[0]["2.running_mean"], before[1]["2.running_mean"])
        for got in before:
            np.testing.assert_allclose(got["0.std"], x.astype(np.float64).std(axis=0), rtol=1e-6)
            assert int(got["0.count"]) == len(x)
        cluster.sync_buffers(model)
        want = (before[0]["2.running_mean"] + before[1]["2.running_mean"]) / 2
        np.testing.assert_allclose(model[2].running_mean.array, want, rtol=1e-6)
        np.testing.assert_array_equal(model[0].mean.array, before[0]["0.mean"])
        after = ray.get([w.buffers.remote() for w in cluster.workers])
        np.testing.assert_allclose(after[1]["2.running_var"], model[2].running_var.array)
    finally:
        cluster.shutdown()


def test_workers_run_compiled_plans_and_match_eager_workers(cluster_env, tmp_path):
    from lamina.distributed import Cluster
    from lamina.train.job import build_model

    path, _, _ = _data(tmp_path)
    results = []
    for compiled in (False, True):
        config = _job(path, epochs=2)
        config.model["layers"].insert(1, {"type": "BatchNorm1d", "num_features": 16})
        config.trainer.compile = compiled
        model = build_model(config)
        cluster = Cluster.for_job(config, model, None)
        try:
            for epoch in range(2):
                cluster.train_epoch(epoch)
                cluster.sync_buffers(model)
            cluster.pull_into(model)
            plans = ray.get([w.__ray_call__.remote(
                lambda self: sum(p.traces for p in getattr(self.algorithm, "plans", {}).values()))
                for w in cluster.workers])
        finally:
            cluster.shutdown()
        assert plans == ([1, 1] if compiled else [0, 0])  # one batch shape: one trace each
        results.append(model.state_dict())
    eager, planned = results
    for name, value in eager.items():
        np.testing.assert_allclose(planned[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_two_stage_partition_equals_the_unsplit_model(cluster_env):
    from lamina.distributed import Pipeline

    lm.manual_seed(0)
    # The second stage holds a residual block: its nested names (2.1.weight) come back.
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(),
                          nn.Residual(nn.LayerNorm(12), nn.Linear(12, 12), nn.Tanh()),
                          nn.Linear(12, 3))
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((5, 6)).astype(np.float32), rng.integers(0, 3, 5)
    pipe = Pipeline(model, cuts=[2])
    try:
        out = pipe.forward(x)
        F.cross_entropy(out, y).backward()
        pipe.backward(out.grad)
        grads = pipe.gradients()
        want = model(lm.tensor(x))
        F.cross_entropy(want, y).backward()
        np.testing.assert_allclose(out.array, want.array, rtol=1e-6)
        assert set(grads) == {n for n, _ in model.named_parameters()}
        for n, p in model.named_parameters():
            np.testing.assert_allclose(grads[n], p.grad, rtol=1e-6, atol=1e-7, err_msg=n)
    finally:
        pipe.shutdown()


def test_a_partition_trains_with_an_optimizer_per_stage_like_the_unsplit_model(cluster_env):
    from lamina.distributed import Pipeline

    lm.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 3))
    # Groups name the unsplit model's parameters: "3.*" lives in the second stage.
    adam = {"type": "AdamW", "lr": 0.01, "weight_decay": 0.1,
            "groups": [{"params": ["1.*", "3.bias"], "weight_decay": 0.0}]}
    pipe = Pipeline(model, cuts=[2], optimizer=adam)
    local = lm.optim.from_config(adam, model.named_parameters())
    rng = np.random.default_rng(1)
    try:
        with pytest.raises(ray.exceptions.RayTaskError, match="no gradients to apply"):
            pipe.step()
        for _ in range(5):
            x, y = rng.standard_normal((8, 6)).astype(np.float32), rng.integers(0, 3, 8)
            out = pipe.forward(x)
            F.cross_entropy(out, y).backward()
            pipe.backward(out.grad)
            pipe.step()
            F.cross_entropy(model(lm.tensor(x)), y).backward()
            local.step()
            local.zero_grad()
        state = pipe.state_dict()
        assert set(state) == set(model.state_dict())  # running statistics come back too
        for name, value in model.state_dict().items():
            np.testing.assert_allclose(state[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
        model.eval()
        pipe.eval()
        x = rng.standard_normal((4, 6)).astype(np.float32)
        np.testing.assert_allclose(pipe.forward(x).array, model(lm.tensor(x)).array, rtol=1e-5)
        fresh = {n: np.full_like(v, 0.5) for n, v in state.items()}
        pipe.load_state_dict(fresh)
        assert all(np.array_equal(pipe.state_dict()[n], v) for n, v in fresh.items())
    finally:
        pipe.shutdown()
