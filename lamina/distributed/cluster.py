"""Starting Ray (a local cluster by default) and the parameter servers and workers on it."""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina.distributed import reaper
from lamina.nn.layer import Layer

if TYPE_CHECKING:
    from lamina.distributed.task import Task
    from lamina.train.jobfile import Job


def init(address: str | None = None, num_cpus: int | None = None,
         object_store_mb: int = 512) -> None:
    """Start a local Ray cluster (loopback listeners only), or join `address`.

    Sets what Ray 2.60 needs on these machines before it starts: no auth token file, no
    usage stats, listeners on 127.0.0.1, and a short temp dir (socket paths over 107 bytes
    fail). Ray reads where to listen when it is first imported: a program that imports
    ray before calling this listens where Ray's defaults say (all interfaces) unless it
    sets RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 itself. Does nothing if Ray is already
    initialised.
    """
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    os.environ.setdefault("RAY_COLOR_PREFIX", "0")
    import ray

    if ray.is_initialized():
        return
    made = None
    if "RAY_TMPDIR" not in os.environ:
        os.environ["RAY_TMPDIR"] = made = tempfile.mkdtemp(prefix="ray", dir="/tmp")
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
    if address is None:  # a cluster of our own: nothing of it outlives this process
        reaper.watch(made)
        kwargs.update(address="local", num_cpus=num_cpus or os.cpu_count(),
                      object_store_memory=object_store_mb * 2**20)
    else:
        kwargs["address"] = address
    ray.init(**kwargs)


def shard_names(model: Layer, servers: int) -> dict[str, int]:
    """Each parameter's server: whole parameters, balanced by size, in a fixed order."""
    load = [0] * servers
    shard_of = {}
    for name, p in sorted(model.named_parameters(), key=lambda kv: (-kv[1].numel(), kv[0])):
        s = int(np.argmin(load))
        shard_of[name] = s
        load[s] += p.numel()
    return shard_of


def spread(count: int) -> list[dict[str, Any]]:
    """Actor options placing `count` actors on the live nodes with CPUs, in turn. Ray would
    pack these lightweight actors onto the driver's node, and its SPREAD strategy is best
    effort (seen here to put two of two on one node). Soft: a restarted actor goes
    elsewhere if its node died. Each asks for a token CPU share: Ray ignores soft node
    affinity for actors that ask for none."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    alive = [n for n in ray.nodes() if n["Alive"]]
    nodes = sorted(n["NodeID"] for n in alive if n["Resources"].get("CPU", 0) > 0) or sorted(
        n["NodeID"] for n in alive)  # e.g. a head node started with --num-cpus 0 is left out
    return [{"scheduling_strategy": NodeAffinitySchedulingStrategy(nodes[i % len(nodes)],
                                                                   soft=True),
             "num_cpus": 0.01} for i in range(count)]


class Cluster:
    """The servers and workers of one distributed run.

    Args:
        task: what the workers train (see `Task`; `Cluster.for_job` makes one from a job).
        model: the driver's replica; its initial parameters seed the servers.
        checkpoint_dir: where each server writes (and on restart reloads) its shard.
    """

    def __init__(self, task: Task, model: Layer, checkpoint_dir: str | None) -> None:
        import ray

        from lamina.distributed.server import ParameterServer
        from lamina.distributed.task import check_travels, send_user_code_by_value
        from lamina.distributed.worker import Worker

        send_user_code_by_value(task)
        check_travels(task.model)
        d = task.distributed
        self.ray, self.task, self.model = ray, task, model
        self.namespace = f"lamina-{uuid.uuid4().hex[:8]}"
        self.shard_of = shard_names(model, d.servers)
        restart = {"max_restarts": -1, "max_task_retries": -1}
        names = [f"server-{i}" for i in range(d.servers)]
        self.servers = [
            ray.remote(ParameterServer).options(name=n, namespace=self.namespace, **place,
                                                **restart)
            .remote(i, task.optimizer, d.mode, d.staleness, d.workers, d.timeout,
                    checkpoint_dir, d.checkpoint_every)
            for i, (n, place) in enumerate(zip(names, spread(d.servers)))]
        params = {n: p.array for n, p in model.named_parameters()}
        ray.get([s.init_params.remote({n: a for n, a in params.items()
                                       if self.shard_of[n] == i})
                 for i, s in enumerate(self.servers)])
        self.task_ref = ray.put(task)  # held here, so restarted workers find it
        self.workers = [
            ray.remote(Worker).options(namespace=self.namespace, **place, **restart)
            .remote(w, d.workers, [self.task_ref], names, self.namespace, self.shard_of)
            for w, place in enumerate(spread(d.workers))]
        self.timeout = d.timeout
        self.live = list(range(d.workers))
        # Asked once, now: a worker busy with an epoch cannot answer another call.
        self.steps_per_epoch = ray.get(self.workers[0].batches_per_epoch.remote())

    def train_epoch(self, epoch: int) -> dict[str, float]:
        """Every live worker trains on its shard; returns the metrics averaged over samples.

        A worker that is gone for good (its actor dead and not restarting), or that has
        neither pushed nor pulled for `timeout` seconds (hung: waiting for a barrier does
        not count), is stopped, reported and left out from then on; the servers drop it
        from their barrier by the same timeout.
        """
        running = {self.workers[w].train_epoch.remote(epoch): w for w in self.live}
        start = time.monotonic()
        results = []
        while running:
            done, _ = self.ray.wait(list(running), num_returns=1,
                                    timeout=min(1.0, self.timeout / 4))
            for future in done:
                w = running.pop(future)
                try:
                    results.append(self.ray.get(future))
                except self.ray.exceptions.RayActorError as e:
                    self._drop(w, type(e).__name__)
            if not done:
                for w in self._silent(set(running.values()), time.monotonic() - start):
                    running = {f: v for f, v in running.items() if v != w}
                    self._drop(w, f"silent for over {self.timeout:g}s")
        if not results:
            raise RuntimeError("lamina.distributed: every worker is gone; the run stops")
        seen = sum(r["seen"] for r in results)
        keys = [k for k in results[0] if k != "seen"]
        return {"seen": seen, **{k: sum(r[k] * r["seen"] for r in results) / max(seen, 1)
                                 for k in keys}}

    def _silent(self, workers: set[int], since_start: float) -> list[int]:
        """The workers no server has heard from for `timeout` seconds in this epoch."""
        replies = self.ray.get([s.silence.remote() for s in self.servers])
        quiet = {w: min([r.get(w, since_start) for r in replies] + [since_start])
                 for w in workers}
        return sorted(w for w, t in quiet.items() if t > self.timeout)

    def _drop(self, w: int, why: str) -> None:
        self.live.remove(w)
        self.ray.kill(self.workers[w], no_restart=True)  # a hung one stops too
        print(f"lamina.distributed: worker {w} is gone ({why}); the run goes on with "
              f"workers {self.live}", file=sys.stderr, flush=True)

    def batches_per_epoch(self) -> int:
        """Synchronous steps in one epoch (each worker's batches)."""
        return self.steps_per_epoch

    def pull_into(self, model: Layer) -> int:
        """Copy the servers' parameters into `model`; returns the lowest shard version."""
        params = dict(model.named_parameters())
        versions = []
        for version, shard in self.ray.get([s.pull.remote(-1) for s in self.servers]):
            versions.append(version)
            for n, a in shard.items():
                params[n].array[...] = a
        return min(versions)

    def sync_buffers(self, model: Layer) -> None:
        """Average the workers' buffers (batch-norm statistics) in worker order, give the
        average back to every worker and to `model`."""
        live = [self.workers[w] for w in self.live]
        got = self.ray.get([w.buffers.remote() for w in live])
        if not got or not got[0]:
            return
        mean = {}
        for n, first in got[0].items():
            if first.dtype.kind in "iu":  # counters: the same on every worker
                mean[n] = first
            else:
                mean[n] = (sum(g[n].astype(np.float64) for g in got) / len(got)
                           ).astype(first.dtype)
        self.ray.get([w.set_buffers.remote(mean) for w in live]
                     + [self.servers[0].set_buffers.remote(mean)])  # what a restart takes
        for n, b in model.named_buffers():
            b.array[...] = mean[n]

    def set_lr(self, lr: float) -> None:
        """Give every server's optimizer this learning rate."""
        self.ray.get([s.set_lr.remote(lr) for s in self.servers])

    def save(self, epochs: int | None = None) -> None:
        """Every server writes its shard's checkpoint now (with `epochs`, also as of the end
        of that many epochs)."""
        self.ray.get([s.save.remote(epochs) for s in self.servers])

    @classmethod
    def for_job(cls, job: Job, model: Layer, checkpoint_dir: str | None,
                built: Any = None) -> Cluster:
        """The cluster a job file describes (its `distributed` section); `built`: the
        job's Run, whose data and model the workers then take (see `Task.from_job`)."""
        from lamina.distributed.task import Task

        return cls(Task.from_job(job, built), model, checkpoint_dir)

    def stats(self) -> list[dict[str, Any]]:
        """Each server shard's version, pushes per worker, live workers, log and pid."""
        return self.ray.get([s.stats.remote() for s in self.servers])

    @staticmethod
    def from_epoch_end(checkpoint_dir: str, epochs: int) -> None:
        """Before a resumed run starts its servers: put back each shard's checkpoint as of
        the end of `epochs` epochs, where the driver's checkpoint resumes (a shard may have
        written later ones, in an epoch the driver never finished)."""
        from lamina.distributed.server_checkpoint import epoch_end
        from lamina.io.checkpoint import CheckpointError, atomic_write

        for path in Path(checkpoint_dir).glob("server-[0-9]*.safetensors"):
            if ".epoch-" in path.name:
                continue
            end = epoch_end(path, epochs)
            if not end.exists():
                raise CheckpointError(f"{end}: missing; the servers hold no checkpoint as of "
                                      f"the {epochs} epochs the run resumes after")
            atomic_write(path, end.read_bytes())

    def shutdown(self) -> None:
        """Stop every worker and server actor (the Ray cluster itself stays up)."""
        for a in self.workers + self.servers:
            self.ray.kill(a, no_restart=True)
