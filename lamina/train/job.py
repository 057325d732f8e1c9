"""Building a validated job: data loaders (with the validation hold-out), the model,
optimizer, callbacks and trainer, and the run directory.

Jobs are read and validated by `lamina.train.jobfile`, and run (here or on the parameter
server) by `lamina.jobs`, which sits above both training and distribution.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

import lamina.optim as optim
from lamina.data import DataLoader, Subset, load_dataset, random_split
from lamina.data.dataset import part_sizes
from lamina.errors import DataError
from lamina.nn.container import Sequential
from lamina.nn.layer import Layer
from lamina.nn.normalization import Standardize
from lamina.nn.registry import from_config
from lamina.optim import lr_scheduler
from lamina.random import manual_seed
from lamina.schema import ConfigError
from lamina.train import callbacks as cb
from lamina.train import tensorboard
from lamina.train.algorithms import Algorithm, algorithm_from_config
from lamina.train.jobfile import LOADER_KEYS, layer_config_path
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

    config: dict[str, Any]
    model: Layer
    optimizer: Any
    algorithm: Algorithm
    data: Data
    trainer: Trainer
    directory: Path


def build_data(config: dict[str, Any]) -> Data:
    """The loaders of a validated job. The validation set depends only on the dataset and
    the trainer's seed, so a resumed run and every distributed worker hold out the same."""
    data = dict(config["data"])
    settings = {k: data.pop(k) for k in list(data) if k in LOADER_KEYS}
    splits, info = load_dataset(settings["name"], **data)
    seed, fraction = config["trainer"]["seed"], settings["val_fraction"]
    train_set, val = splits["train"], None
    if fraction > 0:
        train_set, val_set = _hold_out(train_set, fraction, seed, info.get("ordered", False))
        val = DataLoader(val_set, settings["eval_batch_size"])
    train = DataLoader(train_set, settings["batch_size"], shuffle=settings["shuffle"],
                       drop_last=settings["drop_last"], seed=seed)
    return Data(train, val, DataLoader(splits["test"], settings["eval_batch_size"]), info)


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


def build_model(config: dict[str, Any], data: Data | None = None) -> Layer:
    """The job's model, its initial weights fixed by the seed. Given the job's data, a
    `Standardize` layer that reads the model's input measures its statistics on the
    training split (every process builds the same split, so every worker gets the same);
    without, it waits for a checkpoint to load them."""
    manual_seed(config["trainer"]["seed"])  # the initial weights depend on the seed only
    model = from_config(config["model"], "model")
    if data is not None:
        adapt_inputs(model, data.train.dataset, config["model"])
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


def run_directory(config: dict[str, Any], resume: bool) -> Path:
    """runs/<name>; a fresh run never overwrites another: it takes <name>-2, -3, ..."""
    base = _run_base(config)
    if resume:
        if not (base / "checkpoints" / "last.safetensors").exists():
            raise FileNotFoundError(f"--resume: {base}/checkpoints/last.safetensors does not "
                                    "exist; start the run without --resume")
        return base
    if not (base / "checkpoints").exists():
        return base
    return base.with_name(f"{base.name}-{len(_later_runs(base)) + 2}")


def run_checkpoint(config: dict[str, Any]) -> tuple[Path, str]:
    """The checkpoint that `lamina eval`, `sample` and `export` read when given none: the
    run's best.safetensors, else its last, in runs/<name> (the run --resume continues).
    Returns it with a note for the user, which names any later run of the same job."""
    base = _run_base(config)
    found = [base / "checkpoints" / f for f in ("best.safetensors", "last.safetensors")]
    later = _later_runs(base)
    pick = (f"; to read {later[-1]}, add --set name={later[-1].name}" if later else "")
    for path in found:
        if path.exists():
            return path, f"reading {path}{pick}"
    raise FileNotFoundError(f"no checkpoint in {base / 'checkpoints'}: train the job first, "
                            f"or pass --checkpoint FILE{pick}")


def _run_base(config: dict[str, Any]) -> Path:
    """runs/<name>: a job's first run, the one --resume continues."""
    return Path(config["trainer"]["out_dir"]) / config["name"]


def _later_runs(base: Path) -> list[Path]:
    """The runs made after `base` (runs/<name>-2, -3, ... holding checkpoints), in order."""
    runs, n = [], 2
    while ((run := base.with_name(f"{base.name}-{n}")) / "checkpoints").exists():
        runs.append(run)
        n += 1
    return runs


def build(config: dict[str, Any], resume: bool = False, directory: Path | None = None) -> Run:
    """Build model, data, optimizer, algorithm, callbacks and trainer from a validated job."""
    tcfg = config["trainer"]
    data = build_data(config)
    model = build_model(config, data)
    optimizer = optim.from_config(config["optimizer"], model.named_parameters())
    algorithm = algorithm_from_config(config["algorithm"])
    directory = directory or run_directory(config, resume)
    callbacks: list[cb.Callback] = [cb.NaNGuard()]
    if tcfg["clip_grad_norm"] is not None or tcfg["clip_grad_value"] is not None:
        callbacks.append(cb.GradientClipping(tcfg["clip_grad_norm"], tcfg["clip_grad_value"]))
    if config["scheduler"] is not None:
        s = dict(config["scheduler"])
        name, interval, monitor = s.pop("type"), s.pop("interval"), s.pop("monitor")
        callbacks.append(cb.LRSchedule(lr_scheduler.SCHEDULES[name](optimizer, **s), interval,
                                       monitor))
    if tcfg["early_stopping"] is not None:
        callbacks.append(cb.EarlyStopping(**tcfg["early_stopping"]))
    if tcfg["progress"]:
        callbacks.append(cb.ProgressBar())
    if tcfg["tensorboard"] and tensorboard.available():
        callbacks.append(tensorboard.TensorBoardLogger(directory / "tensorboard"))
    callbacks += [
        cb.CSVLogger(directory / "metrics.csv"),
        cb.PlotCurves(directory / "curves.png"),
        cb.Checkpoint(directory / "checkpoints",
                      cb.Trigger(tcfg["checkpoint_every"], tcfg["checkpoint_unit"]),
                      tcfg["keep_best"], tcfg["keep_best_mode"]),
    ]
    trainer = Trainer(model, optimizer, config["loss"], algorithm, tcfg["metrics"], callbacks,
                      compile=tcfg["compile"])
    return Run(config, model, optimizer, algorithm, data, trainer, directory)
