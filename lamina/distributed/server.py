"""A parameter-server shard: owns some parameters and their optimizer state.

Consistency, per shard:
  bsp  one gradient per live worker per version, averaged in sorted worker order, then one
       optimizer step: deterministic.
  ssp  each push is applied at once; a worker may pull only while it is at most
       `staleness` pushes ahead of the slowest live worker.
  asp  each push is applied at once; pulls never wait.
Pushes carry a tag (the worker's batch over the run, its step within the batch), so a
retried push, or one a restarted worker redoes, is applied once. Every wait has a timeout:
a worker that misses it is dropped from the barrier with a warning. The shard
writes its own checkpoint and reloads it when Ray restarts it
(lamina.distributed.server_checkpoint).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from lamina.distributed.server_checkpoint import ShardCheckpoints

MODES = ("bsp", "ssp", "asp")


class ParameterServer(ShardCheckpoints):
    """The actor class; `lamina.distributed.Cluster` starts it with Ray (restartable)."""

    def __init__(self, shard: int, optimizer: Any, mode: str, staleness: int,
                 workers: int, timeout: float, checkpoint_dir: str | None,
                 checkpoint_every: int) -> None:
        if mode not in MODES:
            raise ValueError(f"distributed.mode: one of {MODES}; got {mode!r}")
        self.shard = shard
        self.optimizer_config = optimizer if callable(optimizer) else dict(optimizer)
        self.mode, self.staleness, self.timeout = mode, staleness, timeout
        self.live = set(range(workers))
        self.path = (Path(checkpoint_dir) / f"server-{shard}.safetensors"
                     if checkpoint_dir else None)
        self.checkpoint_every = checkpoint_every
        self.params: dict[str, np.ndarray] = {}
        self.version = 0
        self.pushes = {w: 0 for w in self.live}  # applied pushes per worker (its clock)
        self.applied: dict[int, tuple[int, int]] = {}  # each worker's last applied tag
        # bsp: this version's gradients, with their tags
        self.pending: dict[int, tuple[tuple[int, int], dict[str, np.ndarray]]] = {}
        self.log: list[tuple[int, int, int]] = []  # ssp: (worker, its clock, slowest clock)
        # Each worker's state (batch-norm statistics, RNG) as of its last applied push, for
        # a restarted worker to go on from exactly there (kept by shard 0 only).
        self.snapshots: dict[int, dict[str, Any]] = {}
        # ... and the one before it: when a node takes a worker and another shard down
        # together, that shard comes back one step behind, and so must the worker.
        self.earlier: dict[int, dict[str, Any]] = {}
        # bsp: the parameters before the last step, which a worker restarted behind this
        # shard computes its redone step from
        self.previous: tuple[int, dict[str, np.ndarray]] | None = None
        self.arriving: dict[int, dict[str, Any]] = {}  # sent with a push not yet applied
        self.heard: dict[int, float] = {}  # when each worker last pushed or pulled
        self.waiting: dict[int, int] = {}  # workers inside pull (waiting is not hanging)
        self.changed = asyncio.Condition()
        self.optimizer: Any = None
        self.restored = False
        if self.path is not None and self.path.exists():
            self._restore()

    # -- setup ------------------------------------------------------------------------------
    def _make_optimizer(self) -> None:
        from lamina.autograd.tensor import Tensor
        from lamina.optim.config import from_config

        self.tensors = {n: Tensor(a, requires_grad=True) for n, a in self.params.items()}
        # A group's patterns may match no parameter of this shard: strict=False.
        if callable(self.optimizer_config):  # a factory: params -> Optimizer
            self.optimizer = self.optimizer_config(list(self.tensors.values()))
        else:
            self.optimizer = from_config(self.optimizer_config, self.tensors.items(),
                                         strict=False)

    async def init_params(self, params: dict[str, np.ndarray]) -> int:
        """Take the initial parameters (ignored once the shard has some, e.g. restored)."""
        if not self.params:
            self.params = {n: np.array(a) for n, a in params.items()}  # Ray's are read-only
            self._make_optimizer()
        return self.version

    async def register(self, worker: int) -> tuple[tuple[int, int], int]:
        """A worker (re)joins: it is live again; returns the tag of its last applied push
        ((-1, -1) for none) and this shard's version."""
        async with self.changed:
            self.live.add(worker)
            self.pushes.setdefault(worker, min(self.pushes.values(), default=0))
            self.changed.notify_all()
            return self.applied.get(worker, (-1, -1)), self.version

    # -- the protocol -----------------------------------------------------------------------
    def _ready(self, worker: int) -> bool:
        if worker < 0:  # the driver, reading parameters between epochs, never waits
            return True
        if self.mode == "bsp":
            return worker not in self.pending  # its last gradient has been applied
        if self.mode == "ssp":
            slowest = min(self.pushes[w] for w in self.live)
            return self.pushes[worker] - slowest <= self.staleness
        return True

    async def pull(self, worker: int, version: int | None = None
                   ) -> tuple[int, dict[str, np.ndarray]]:
        """Current parameters, once this worker may go on (see the module's docstring).
        With `version` (a restarted worker's first pull), the parameters as of that version
        at once: this shard's, or those before its last step if it is one ahead."""
        if version is not None:  # at once: the barrier may hold its push from before
            if version == self.version:
                return self.version, self.params
            if self.previous is None or self.previous[0] != version:
                raise RuntimeError(f"server {self.shard}: no parameters as of version "
                                   f"{version} (at {self.version})")
            return self.previous
        async with self.changed:
            self._heard(worker, +1)
            try:
                return await self._pull(worker)
            finally:
                self._heard(worker, -1)

    async def _pull(self, worker: int) -> tuple[int, dict[str, np.ndarray]]:
        await self._until_ready(worker)
        if self.mode == "ssp" and worker >= 0:
            self.log.append((worker, self.pushes[worker],
                             min(self.pushes[w] for w in self.live)))
        return self.version, self.params

    async def _until_ready(self, worker: int) -> None:
        """Wait (holding no lock meanwhile) until the worker may go on; a worker that
        keeps the others waiting past the timeout is dropped from the barrier."""
        deadline = time.monotonic() + self.timeout
        while not self._ready(worker):
            left = deadline - time.monotonic()
            if left <= 0:
                self._drop_stragglers(worker)
                deadline = time.monotonic() + self.timeout
                continue
            with contextlib.suppress(asyncio.TimeoutError):  # then check the deadline
                await asyncio.wait_for(self.changed.wait(), left)

    def _heard(self, worker: int, waiting: int = 0) -> None:
        if worker >= 0:
            self.heard[worker] = time.monotonic()
            self.waiting[worker] = self.waiting.get(worker, 0) + waiting

    async def silence(self) -> dict[int, float]:
        """Seconds since each worker last pushed or pulled; 0 while it waits in a pull."""
        now = time.monotonic()
        return {w: 0.0 if self.waiting.get(w) else now - t for w, t in self.heard.items()}

    def _drop_stragglers(self, waiting: int) -> None:
        if self.mode == "bsp":
            gone = sorted(self.live - set(self.pending))
        else:  # ssp: the slowest live workers hold the others back
            slowest = min(self.pushes[w] for w in self.live)
            gone = sorted(w for w in self.live if self.pushes[w] == slowest and w != waiting)
        if not gone:
            return
        print(f"lamina.distributed: server {self.shard}: workers {gone} sent nothing for "
              f"{self.timeout:.0f}s; dropped from the barrier, the run goes on",
              file=sys.stderr, flush=True)
        self.live -= set(gone)
        if self.mode == "bsp" and self.pending:
            self._apply_pending()

    async def push(self, worker: int, tag: tuple[int, int], grads: dict[str, np.ndarray],
                   snapshot: dict[str, Any] | None = None) -> int:
        """One worker's gradients, tagged (batch, step within it): applied at most once.
        `snapshot` is the worker's state after computing them, kept once they apply."""
        tag = tuple(tag)
        async with self.changed:
            self._heard(worker)
            if tag <= self.applied.get(worker, (-1, -1)) or (self.mode == "bsp"
                                                              and worker in self.pending):
                return self.version  # a retried or duplicate push
            if worker not in self.live:
                self.live.add(worker)  # a worker dropped earlier is back
            if snapshot is not None:
                self.arriving[worker] = snapshot
            if self.mode == "bsp":
                self.pending[worker] = (tag, grads)
                if self.live <= set(self.pending):
                    self._apply_pending()
            else:
                self.pushes[worker] = self.pushes.get(worker, 0) + 1
                self.applied[worker] = tag
                self._keep_snapshot(worker)
                self._apply(grads)
            self.changed.notify_all()
            if self.mode == "bsp":
                # Return once the barrier has applied (and saved) it: a server restarted
                # before that has lost the pending push, and this call, failed, is retried.
                # Returning at once would let the worker pull the old version and go on.
                self._heard(worker, +1)
                try:
                    await self._until_ready(worker)
                finally:
                    self._heard(worker, -1)
            return self.version

    def _apply_pending(self) -> None:
        order = sorted(self.pending)  # a fixed order: the sum, hence the run, is deterministic
        total = {n: np.array(self.pending[order[0]][1][n], copy=True) for n in self.params}
        for w in order[1:]:
            for n in total:
                total[n] += self.pending[w][1][n]
        for w in order:
            self.pushes[w] = self.pushes.get(w, 0) + 1
            self.applied[w] = self.pending[w][0]
            self._keep_snapshot(w)
        self.pending = {}
        self._apply({n: g / len(order) for n, g in total.items()})

    def _keep_snapshot(self, worker: int) -> None:
        if worker in self.arriving:
            if worker in self.snapshots:
                self.earlier[worker] = self.snapshots[worker]
            self.snapshots[worker] = self.arriving.pop(worker)

    async def snapshot(self, worker: int, tag: tuple[int, int] | None = None
                       ) -> dict[str, Any] | None:
        """The worker's state as of its last applied push, or as of the push tagged `tag`
        if that is the last or the one before (None if there is none such)."""
        for snap in (self.snapshots.get(worker), self.earlier.get(worker)):
            if snap is not None and (tag is None or tuple(snap["tag"]) == tuple(tag)):
                return snap
        return None

    async def set_buffers(self, buffers: dict[str, np.ndarray]) -> None:
        """Every worker's batch-norm statistics are now `buffers` (the driver's average at
        the end of an epoch): what a worker restarted from here must start with."""
        for snap in (*self.snapshots.values(), *self.earlier.values()):
            snap["buffers"] = buffers

    def _apply(self, grads: dict[str, np.ndarray]) -> None:
        if self.mode == "bsp":  # into the same arrays each step: a copy, no allocation
            kept = self.previous[1] if self.previous else {n: np.empty_like(a) for n, a in
                                                           self.params.items()}
            for n, a in self.params.items():
                np.copyto(kept[n], a)
            self.previous = (self.version, kept)
        for n, t in self.tensors.items():
            t.grad = np.asarray(grads[n], dtype=t.dtype)
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.version += 1
        if self.path is not None and self.version % self.checkpoint_every == 0:
            self._save()

    async def set_lr(self, lr: float) -> None:
        """Set the learning rate (the driver runs the schedule and sends each epoch's)."""
        for group in self.optimizer.param_groups:
            group["lr"] = lr

    async def stats(self) -> dict[str, Any]:
        """Version, clocks, live workers and the ssp log (for tests and progress)."""
        return {"version": self.version, "pushes": dict(self.pushes), "live": sorted(self.live),
                "log": list(self.log), "restored": self.restored, "pid": os.getpid()}
