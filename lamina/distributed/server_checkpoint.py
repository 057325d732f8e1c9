"""A parameter-server shard's checkpoint: written every `checkpoint_every` versions and
at the driver's request, reloaded when Ray restarts the shard, and copied as of each
epoch's end for a run resumed from the driver's checkpoint of that epoch."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np


def epoch_end(path: Path, epochs: int) -> Path:
    """Where a shard's checkpoint as of the end of `epochs` epochs is kept, beside `path`."""
    return path.with_name(path.name.replace(".safetensors", f".epoch-{epochs}.safetensors"))


class ShardCheckpoints:
    """ParameterServer's checkpoint methods: its parameters, optimizer state, clocks and
    workers' snapshots in one safetensors file at `path` (None: no checkpoints)."""

    # The server's state these methods read and write (set in ParameterServer.__init__).
    shard: int
    path: Path | None
    params: dict[str, np.ndarray]
    optimizer: Any
    version: int
    pushes: dict[int, int]
    applied: dict[int, tuple[int, int]]
    live: set[int]
    snapshots: dict[int, dict[str, Any]]
    earlier: dict[int, dict[str, Any]]
    previous: tuple[int, dict[str, np.ndarray]] | None
    restored: bool

    def _save(self) -> None:
        from lamina.io.checkpoint import save

        # The optimizer numbers its state by parameter position; the file lists arrays by
        # name, sorted: the order is saved, so a restore numbers them as this one did.
        extra = {"version": self.version, "pushes": {str(k): v for k, v in self.pushes.items()},
                 "applied": {str(k): list(v) for k, v in self.applied.items()},
                 "live": sorted(self.live), "names": list(self.params),
                 "snapshots": {str(k): v for k, v in self.snapshots.items()},
                 "earlier": {str(k): v for k, v in self.earlier.items()}}
        # A node lost mid-step can take a worker and this shard down after the shard applied
        # the worker's last push but before another shard got it: the restarted worker then
        # redoes that step from the version before, which this shard, restored, must serve.
        if self.previous is not None:
            extra["previous"] = {"version": self.previous[0], "params": self.previous[1]}
        save(self.path, self.params, self.optimizer, extra=extra)

    def _restore(self) -> None:
        from lamina.io.checkpoint import CheckpointError, load, read

        arrays, meta = read(self.path)
        names = meta.get("extra", {}).get("names")
        if names is None or set(names) != {n for n in arrays if not n.startswith("__")}:
            raise CheckpointError(f"{self.path}: a server checkpoint lists its parameters' "
                                  "names in order (extra.names); this one does not match "
                                  "its arrays")
        self.params = {n: np.array(arrays[n]) for n in names}
        self._make_optimizer()
        info = load(self.path, optimizer=self.optimizer)  # shapes checked, by position
        extra = info["extra"]
        self.version = int(extra["version"])
        self.pushes = {int(k): int(v) for k, v in extra["pushes"].items()}
        self.applied = {int(k): (int(b), int(s)) for k, (b, s) in extra["applied"].items()}
        self.live = set(extra["live"])
        self.snapshots = {int(k): v for k, v in extra.get("snapshots", {}).items()}
        self.earlier = {int(k): v for k, v in extra.get("earlier", {}).items()}
        if "previous" in extra:  # writable: the next step copies into these arrays
            before = extra["previous"]
            self.previous = (int(before["version"]),
                             {n: np.array(before["params"][n]) for n in names})
        self.restored = True
        print(f"lamina.distributed: server {self.shard} restored version {self.version} from "
              f"{self.path}", file=sys.stderr, flush=True)

    async def save(self, epochs: int | None = None) -> None:
        """Write the shard's checkpoint now; with `epochs`, also a copy as of the end of
        that many epochs, which the driver's checkpoint of that epoch matches and a run
        resumed from it starts from (see `Cluster.from_epoch_end`). The copy before it is
        kept too (the driver may be killed before its own checkpoint is written)."""
        if self.path is None or not self.params:
            return
        self._save()
        if epochs is not None:
            from lamina.io.checkpoint import atomic_write

            atomic_write(epoch_end(self.path, epochs), self.path.read_bytes())
            epoch_end(self.path, epochs - 2).unlink(missing_ok=True)
