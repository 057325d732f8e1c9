"""Running a validated job, here or on the parameter server: the layer above both
`lamina.train` (which builds the run) and `lamina.distributed` (which can carry it out),
so neither imports the other to decide. `lamina train` calls `train`.

Examples:
    >>> from lamina.jobs import train
    >>> from lamina.train.jobfile import load_config
    >>> run, test = train(load_config("examples/mnist1d_cnn.yaml"))  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import copy
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lamina.errors import Terminated
from lamina.io.checkpoint import atomic_write
from lamina.io.checkpoint import read as read_checkpoint
from lamina.train import callbacks as cb
from lamina.train.job import Run, build, resume_checkpoint
from lamina.train.job_yaml import read_yaml
from lamina.train.jobfile import Job
from lamina.train.trainer import Trainer


def train(job: Job, resume: bool = False) -> tuple[Run, dict[str, float]]:
    """Run a validated job: write the resolved config, train, evaluate on the test split."""
    run = build(job, resume)
    path = None
    if resume:
        path, note = resume_checkpoint(run.directory / "checkpoints")
        if note:
            print(f"lamina: {note}", file=sys.stderr)
    cluster = None
    if job.distributed is not None:
        cluster = _distribute(run, job, None if path is None else _epochs_done(path))
    run.directory.mkdir(parents=True, exist_ok=True)
    if path is not None:
        run.trainer.resume(path)
    _write_config(run.directory, job, resume)
    try:
        with _stop_on_signals(run.trainer) as received:
            run.trainer.fit(run.data.train, job.trainer.epochs, run.data.val)
        if run.trainer.stopped_now:
            raise Terminated if signal.SIGTERM in received else KeyboardInterrupt
        return run, run.trainer.evaluate(run.data.test)
    except Exception as e:  # a crash (disk full, a bug in a callback) loses nothing either
        if run.trainer.last_checkpoint and not isinstance(e, cb.NonFiniteError):  # (it names it)
            e.add_note(_resume_note(run, job))
        raise
    except KeyboardInterrupt as e:  # the CLI prints the note instead of a traceback
        e.add_note(_resume_note(run, job) if run.trainer.last_checkpoint
                   else "no checkpoint had been written yet")
        raise
    finally:
        if cluster is not None:
            cluster.shutdown()


def _resume_note(run: Run, job: Job) -> str:
    name = run.directory.name
    how = "--resume" + (f" --set name={name}" if name != job.name else "")
    return f"the last checkpoint written is {run.trainer.last_checkpoint}; continue with {how}"


def _write_config(directory: Path, job: Job, resume: bool) -> None:
    """Write the resolved job to config.yaml. A resumed run whose job changed (more epochs,
    another learning rate) keeps the file its earlier epochs were trained by as
    config.<n>.yaml, and says on stderr what changed."""
    import yaml

    path, config = directory / "config.yaml", job.to_dict()
    if resume and path.exists():
        changes = _changes(read_yaml(path.read_text(encoding="utf-8")), config)
        if changes:
            n = 1
            while (directory / f"config.{n}.yaml").exists():
                n += 1
            path.replace(directory / f"config.{n}.yaml")
            print(f"lamina: resuming with a changed job (config.{n}.yaml keeps the earlier "
                  f"one): {'; '.join(changes)}", file=sys.stderr)
    atomic_write(path, yaml.safe_dump(copy.deepcopy(config), sort_keys=False).encode())


def _changes(before: Any, after: Any, path: str = "") -> list[str]:
    """`key.path: old -> new` for every value that differs (the run's name aside: a
    numbered run directory is resumed with --set name=<name>-2)."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = [k for k in dict.fromkeys([*before, *after]) if (path, k) != ("", "name")]
        return [c for k in keys for c in _changes(before.get(k), after.get(k),
                                                  f"{path}.{k}" if path else str(k))]
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [c for i, (b, a) in enumerate(zip(before, after))
                for c in _changes(b, a, f"{path}[{i}]")]
    return [] if before == after else [f"{path}: {before!r} -> {after!r}"]


@contextlib.contextmanager
def _stop_on_signals(trainer: Trainer) -> Iterator[list[int]]:
    """The first Ctrl-C or SIGTERM stops training after the current batch, with a
    checkpoint of its place in the epoch; a second one acts at once. Yields the signals
    received. A KeyboardInterrupt raised straight from the signal could land in a weakref
    callback during garbage collection, where Python prints and swallows it, and training
    would go on."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():  # signals are main-only
        yield received
        return

    def first(signum: int, frame: Any) -> None:
        received.append(signum)
        trainer.stop("interrupted" if signum == signal.SIGINT else "terminated", now=True)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    previous = {s: signal.signal(s, first) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _epochs_done(checkpoint: Path) -> int:
    """The epochs a trainer's checkpoint was written after."""
    return int(read_checkpoint(checkpoint)[1].get("extra", {}).get("epoch", 0))


def _distribute(run: Run, job: Job, resumed_after: int | None) -> Any:
    """Start servers and workers (from the shards' checkpoints as of `resumed_after`
    epochs, for a resumed run), and drive them from a DistributedTrainer."""
    from lamina.distributed import Cluster, DistributedTrainer, init  # Ray loads only here

    init(address=job.distributed.address)  # type: ignore[union-attr]
    servers = str(run.directory / "checkpoints" / "servers")
    if resumed_after is not None:
        Cluster.from_epoch_end(servers, resumed_after)
    cluster = Cluster.for_job(job, run.model, servers, built=run)  # its data, loaded once
    old = run.trainer
    run.trainer = DistributedTrainer(cluster, run.model, job.loss.to_dict(), run.algorithm,
                                     job.trainer.metrics, old.callbacks,
                                     optimizer=run.optimizer if job.scheduler else None)
    return cluster
