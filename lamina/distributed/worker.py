"""Workers: a model replica and a shard of the data, training through a parameter server.

`PSClient` is the updater seam's remote side: `pull()` copies the servers' parameters
into the replica, `push(name, grad)` collects gradients, `step()` sends each shard its
part. Any algorithm (bp, bptt, cd) runs against it unchanged.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina.nn.layer import Layer
from lamina.random import get_rng_state, manual_seed, set_rng_state

if TYPE_CHECKING:
    from lamina.distributed.task import Task


class PSClient:
    """The updater for a worker: pull / push / step against sharded parameter servers."""

    def __init__(self, worker: int, model: Layer, servers: list[Any],
                 shard_of: dict[str, int], clip_norm: float | None = None,
                 clip_value: float | None = None) -> None:
        import ray

        self.clip_norm, self.clip_value = clip_norm, clip_value
        self.ray, self.worker, self.model = ray, worker, model
        self.servers, self.shard_of = servers, shard_of
        self.params = dict(model.named_parameters())
        self.grads: dict[str, np.ndarray] = {}
        # Each push is tagged (batch over the whole run, step within the batch): BPTT
        # steps once per chunk. Pushes at or before `applied` (what the servers had from
        # this worker when it registered) were applied before a restart and are not resent.
        self.batch, self.step_in_batch = 0, 0
        self.applied = (-1, -1)
        self.snapshot: Any = None  # fn() -> this worker's state, sent with each push
        # After a restart in BSP: the version the first pull reads, at once
        self.resume_version: int | None = None

    def pull(self) -> None:
        """Copy the current parameters into the replica (waits as the mode requires)."""
        version, self.resume_version = self.resume_version, None
        replies = self.ray.get([s.pull.remote(self.worker, version) for s in self.servers])
        for _, params in replies:
            for name, value in params.items():
                self.params[name].array[...] = value

    def push(self, name: str, grad: Any) -> None:
        """Keep one parameter's gradient for the next step (summed if pushed twice)."""
        self.grads[name] = grad if name not in self.grads else self.grads[name] + grad

    def begin_batch(self, batch: int) -> None:
        """The next pushes belong to batch number `batch` of the run (from 0)."""
        self.batch, self.step_in_batch = batch, 0

    def step(self) -> None:
        """Send every shard its gradients, tagged (batch, step within the batch)."""
        tag = (self.batch, self.step_in_batch)
        self.step_in_batch += 1
        if tag > self.applied:
            self._send(tag)
        self.grads = {}
        for p in self.params.values():
            p.grad = None

    def _send(self, tag: tuple[int, int]) -> None:
        if self.clip_norm is not None or self.clip_value is not None:
            self._clip()
        parts: list[dict[str, np.ndarray]] = [{} for _ in self.servers]
        for name, p in self.params.items():
            g = self.grads.get(name)
            parts[self.shard_of[name]][name] = g if g is not None else np.zeros_like(p.array)
        # Shard 0 keeps the worker's state after this step, for a restart to go on from.
        state = None if self.snapshot is None else {"tag": list(tag), **self.snapshot()}
        self.ray.get([s.push.remote(self.worker, tag, part, state if i == 0 else None)
                      for i, (s, part) in enumerate(zip(self.servers, parts))])

    def _clip(self) -> None:
        """Clip this worker's gradient before it leaves (trainer.clip_grad_norm / _value)."""
        from lamina.optim import clip_grad_norm_, clip_grad_value_

        for name, g in self.grads.items():
            self.params[name].grad = np.array(g)
        live = [p for p in self.params.values() if p.grad is not None]
        if self.clip_value is not None:
            clip_grad_value_(live, self.clip_value)
        if self.clip_norm is not None:
            clip_grad_norm_(live, self.clip_norm)
        self.grads = {n: p.grad.array for n, p in self.params.items() if p.grad is not None}


class Worker:
    """The actor class: a replica of the task's model and its shard of the data.

    `task` comes as [ObjectRef] (a list, so Ray does not resolve it on the way): a
    restartable actor is rebuilt from its arguments, and the task, with its data, stays in
    the object store while the driver holds it rather than in every restart's call."""

    def __init__(self, worker: int, workers: int, task: list[Any], server_names: list[str],
                 namespace: str, shard_of: dict[str, int]) -> None:
        import ray

        task_: Task = ray.get(task[0])
        self.worker, self.workers, self.task = worker, workers, task_
        self.loader = task_.loader(worker, workers)
        self.model = task_.model  # this process's own copy, from Ray's serialisation
        for t in (*self.model.parameters(), *self.model.buffers()):
            if not t.array.flags.writeable:  # Ray hands arrays over read-only, zero-copy
                t.array = t.array.copy()
        self.algorithm = task_.build_algorithm()
        servers = [ray.get_actor(n, namespace=namespace) for n in server_names]
        self.client = PSClient(worker, self.model, servers, shard_of, task_.clip_grad_norm,
                               task_.clip_grad_value)
        # A restarted worker resumes after the last push every shard applied, from the state
        # it sent with it (batch-norm statistics, RNG), and from the parameters as of then:
        # a shard restarted together with it (a lost node) may be a step behind the others,
        # and a shard may yet apply the push it sent before it died (BSP: the same values).
        joined = ray.get([s.register.remote(worker) for s in servers])
        self.client.applied = min(tuple(tag) for tag, _ in joined)
        if self.client.applied >= (0, 0) and task_.distributed.mode == "bsp":
            self.client.resume_version = min(version for _, version in joined)
        self.client.snapshot = self._state
        self.resumed = ray.get(servers[0].snapshot.remote(worker, self.client.applied))
        if self.resumed is not None:
            self.set_buffers(self.resumed["buffers"])

    def batches_per_epoch(self) -> int:
        """Every worker gets the same number of batches: the shard is cut evenly."""
        return len(self.loader)

    def train_epoch(self, epoch: int) -> dict[str, float]:
        """Train on this worker's shard of `epoch`, from where the servers say it stopped."""
        manual_seed(self.task.seed * 1000 + epoch * 100 + self.worker)
        n = self.batches_per_epoch()
        first = self._first_batch(epoch * n)
        totals: dict[str, float] = {}
        seen = 0
        self.model.train()
        self.loader.set_epoch(epoch)
        for i, batch in enumerate(self.loader):
            if i < first:
                continue
            self.client.begin_batch(epoch * n + i)
            logs = self.algorithm.train_one_batch(self.model, batch, self.client)
            size = len(batch[0])
            for k, v in logs.items():
                totals[k] = totals.get(k, 0.0) + v * size
            seen += size
        return {"seen": seen, **{k: v / max(seen, 1) for k, v in totals.items()}}

    def _state(self) -> dict[str, Any]:
        return {"buffers": self.buffers(), "rng": get_rng_state()}

    def _first_batch(self, start: int) -> int:
        """The batch of this epoch (which starts at run batch `start`) to train first. After
        a restart inside it: the batch after the last one the servers applied, from the
        state sent with it, where that step ended its batch and the state is there (exact);
        else the last batch they have a push from, redone (it may be cut short between
        BPTT chunks; its applied pushes are not resent), which the log says."""
        resumed, self.resumed = self.resumed, None
        applied = self.client.applied
        first = applied[0] - start
        if first < 0:
            return 0
        mode = self.task.distributed.mode
        if (resumed is not None and tuple(resumed["tag"]) == applied
                and self.algorithm.one_step_per_batch):
            set_rng_state(resumed["rng"])
            if mode != "bsp":  # the others went on meanwhile, in an order no rerun repeats
                _say(f"worker {self.worker} restarted after batch {applied[0]}; in {mode} "
                     "mode this run is not bit-exact")
            return first + 1
        _say(f"worker {self.worker} restarted inside batch {applied[0]}; it redoes that "
             "batch, so this run is not bit-exact")
        return first

    def buffers(self) -> dict[str, np.ndarray]:
        """This replica's buffers (batch-norm statistics)."""
        return {n: b.array.copy() for n, b in self.model.named_buffers()}

    def set_buffers(self, buffers: dict[str, np.ndarray]) -> None:
        """Replace the replica's buffers (with the workers' average)."""
        for n, b in self.model.named_buffers():
            b.array[...] = buffers[n]

    def pid(self) -> int:
        """The actor's process id (tests kill it to check restarts)."""
        import os

        return os.getpid()


def _say(line: str) -> None:
    print(f"lamina.distributed: {line}", file=sys.stderr, flush=True)
