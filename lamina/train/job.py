"""Building a validated job in one pass: data loaders (with the validation hold-out), the
model, optimizer, algorithm, callbacks and trainer, and the run directory.

Jobs are read and validated into a `Job` by `lamina.train.jobfile`, and run (here or on
the parameter server) by `lamina.jobs`, which sits above both training and distribution.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from lamina.data import DataLoader, Subset, load_dataset, random_split
from lamina.data.dataset import part_sizes
from lamina.errors import DataError
from lamina.io.checkpoint import CheckpointError, non_finite
from lamina.io.checkpoint import read as read_checkpoint
from lamina.nn.container import Sequential
from lamina.nn.layer import Layer
from lamina.nn.registry import from_config
from lamina.nn.standardize import Standardize
from lamina.random import manual_seed
from lamina.schema import ConfigError
from lamina.train import callbacks as cb
from lamina.train import logging_callbacks, tensorboard
from lamina.train.algorithms import Algorithm
from lamina.train.jobfile import Job, layer_config_path
from lamina.train.trainer import Trainer

ADAPT_BATCH = 4096  # samples per batch when a Standardize layer measures the training split


@dataclasses.dataclass
class Data:
    """A job's loaders: train, validation (None when `data.val_fraction` is 0) and test,
    with the dataset's `info` (input shape, classes...)."""

    train: DataLoader
    val: DataLoader | None
    test: DataLoader
    info: dict[str, Any]


@dataclasses.dataclass
class Run:
    """Everything a job builds: model, optimizer, data loaders, trainer, run directory."""

    config: Job
    model: Layer
    optimizer: Any
    algorithm: Algorithm
    data: Data
    trainer: Trainer
    directory: Path


def build_data(job: Job) -> Data:
    """The loaders of a validated job. The validation set depends only on the dataset and
    the trainer's seed, so a resumed run and every distributed worker hold out the same."""
    data, seed = job.data, job.trainer.seed
    splits, info = load_dataset(data.name, **data.options)
    train_set, val = splits["train"], None
    if data.val_fraction > 0:
        train_set, val_set = _hold_out(train_set, data.val_fraction, seed,
                                       info.get("ordered", False))
        val = DataLoader(val_set, data.eval_batch_size)
    train = DataLoader(train_set, data.batch_size, shuffle=data.shuffle,
                       drop_last=data.drop_last, seed=seed)
    if len(train) == 0:  # an epoch would train nothing, and its curves plot nothing
        raise DataError(f"data: the training split holds {len(train_set)} samples"
                        + (" after the validation hold-out" if val is not None else "")
                        + f", fewer than one batch of {data.batch_size} with drop_last; lower "
                        "data.batch_size or set data.drop_last: false")
    return Data(train, val, DataLoader(splits["test"], data.eval_batch_size), info)


def _hold_out(dataset: Any, fraction: float, seed: int, ordered: bool) -> list[Subset]:
    """Random samples of i.i.d. data; the end of ordered data (consecutive pieces of one
    text), whose random pieces would each sit between two training pieces."""
    n = len(dataset)
    if n < 2:
        raise DataError(f"data.val_fraction: the training split has {n} sample(s), too few to "
                        "hold some out; set data.val_fraction: 0")
    if not ordered:
        return random_split(dataset, [1 - fraction, fraction], seed=seed)
    cut = int(part_sizes([1 - fraction, fraction], n)[0])  # as random_split sizes it
    return [Subset(dataset, np.arange(cut)), Subset(dataset, np.arange(cut, n))]


def build_model(job: Job, data: Data | None = None) -> Layer:
    """The job's model, its initial weights fixed by the seed. Given the job's data, a
    `Standardize` layer that reads the model's input measures its statistics on the
    training split (every process builds the same split, so every worker gets the same);
    without, it waits for a checkpoint to load them."""
    manual_seed(job.trainer.seed)  # the initial weights depend on the seed only
    model = from_config(job.model, "model")
    if data is not None:
        adapt_inputs(model, data.train.dataset, job.model)
    return model


def adapt_inputs(model: Layer, dataset: Any, model_config: Any = None) -> None:
    """Adapt the Standardize layer that reads the model's input (the first of nested
    Sequentials) to `dataset`. Any other one needs its statistics in its config: a job
    has no input to measure for it (named by its place in `model_config`)."""
    first = model
    while isinstance(first, Sequential) and len(first):
        first = first[0]
    for path, layer in model.named_layers():
        if not isinstance(layer, Standardize) or layer.ready:
            continue
        if layer is not first:
            where = (layer_config_path(model_config, path.split("."))
                     or f"model layer {path}")
            raise ConfigError(f"{where}: a job measures a Standardize layer's statistics "
                              "only where it reads the model's input (the first layer); give "
                              "this one mean and std in its config")
        layer.adapt(DataLoader(dataset, ADAPT_BATCH))


def run_directory(job: Job, resume: bool) -> Path:
    """runs/<name>; a fresh run never overwrites another: it takes <name>-2, -3, ..."""
    base = _run_base(job)
    if resume:
        if not (base / "checkpoints" / "last.safetensors").exists():
            raise FileNotFoundError(f"--resume: {base}/checkpoints/last.safetensors does not "
                                    "exist; start the run without --resume")
        return base
    if not (base / "checkpoints").exists():
        return base
    return base.with_name(f"{base.name}-{len(_later_runs(base)) + 2}")


def run_checkpoint(job: Job) -> tuple[Path, str]:
    """The checkpoint that `lamina eval`, `sample` and `export` read when given none: the
    run's best.safetensors, else its last, in runs/<name> (the run --resume continues),
    whichever holds finite weights. Returns it with a note for the user, which names any
    later run of the same job."""
    base = _run_base(job)
    later = _later_runs(base)
    pick = (f"; to read {later[-1]}, add --set name={later[-1].name}" if later else "")
    found = [p for p in (base / "checkpoints" / f for f in ("best.safetensors",
                                                             "last.safetensors"))
             if p.exists()]
    for path in found:
        if not non_finite(read_checkpoint(path)[0]):
            return path, f"reading {path}{pick}"
    if found:
        raise CheckpointError(f"{found[0]}: holds non-finite weights "
                              f"({', '.join(non_finite(read_checkpoint(found[0])[0])[:3])}), "
                              f"as does every checkpoint in {base / 'checkpoints'}; pass "
                              "--checkpoint FILE")
    raise FileNotFoundError(f"no checkpoint in {base / 'checkpoints'}: train the job first, "
                            f"or pass --checkpoint FILE{pick}")


def resume_checkpoint(directory: Path) -> tuple[Path, str]:
    """The checkpoint --resume continues from: last.safetensors, or where its weights are
    not finite (a run that diverged, a file written by something else), best.safetensors,
    which the note says."""
    last, best = directory / "last.safetensors", directory / "best.safetensors"
    bad = non_finite(read_checkpoint(last)[0])
    if not bad:
        return last, ""
    if best.exists() and not non_finite(read_checkpoint(best)[0]):
        return best, (f"{last} holds non-finite weights ({', '.join(bad[:3])}); resuming "
                      f"from {best}, the last finite checkpoint")
    raise CheckpointError(f"{last}: holds non-finite weights ({', '.join(bad[:3])}) and no "
                          "finite checkpoint is left to resume from; start the run again")


def _run_base(job: Job) -> Path:
    """runs/<name>: a job's first run, the one --resume continues."""
    return Path(job.trainer.out_dir) / job.name


def _later_runs(base: Path) -> list[Path]:
    """The runs made after `base` (runs/<name>-2, -3, ... holding checkpoints), in order."""
    runs, n = [], 2
    while ((run := base.with_name(f"{base.name}-{n}")) / "checkpoints").exists():
        runs.append(run)
        n += 1
    return runs


def build(job: Job, resume: bool = False, directory: Path | None = None) -> Run:
    """Build data, model, optimizer, algorithm, callbacks and trainer from a validated job."""
    data = build_data(job)
    model = build_model(job, data)
    optimizer = job.optimizer.build(model.named_parameters())
    algorithm = job.algorithm.build()
    directory = directory or run_directory(job, resume)
    trainer = Trainer(model, optimizer, job.loss.to_dict(), algorithm, job.trainer.metrics,
                      callbacks(job, optimizer, directory), compile=job.trainer.compile)
    return Run(job, model, optimizer, algorithm, data, trainer, directory)


def callbacks(job: Job, optimizer: Any, directory: Path) -> list[cb.Callback]:
    """The run's callbacks, as the trainer section and the schedule ask."""
    t = job.trainer
    out: list[cb.Callback] = [cb.NaNGuard()]
    if t.clip_grad_norm is not None or t.clip_grad_value is not None:
        out.append(cb.GradientClipping(t.clip_grad_norm, t.clip_grad_value))
    if job.scheduler is not None:
        out.append(cb.LRSchedule(job.scheduler.build(optimizer), job.scheduler.interval,
                                 job.scheduler.monitor))
    if t.early_stopping is not None:
        out.append(cb.EarlyStopping(**t.early_stopping))
    if t.progress:
        out.append(logging_callbacks.ProgressBar())
    if t.tensorboard and tensorboard.available():
        out.append(tensorboard.TensorBoardLogger(directory / "tensorboard"))
    return out + [
        logging_callbacks.CSVLogger(directory / "metrics.csv"),
        logging_callbacks.PlotCurves(directory / "curves.png"),
        cb.Checkpoint(directory / "checkpoints", cb.Trigger(t.checkpoint_every,
                                                             t.checkpoint_unit),
                      t.keep_best, t.keep_best_mode),
    ]
