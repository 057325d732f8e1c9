"""Job files (YAML): loading, with `--set` overrides, and validation into a typed `Job`
whose errors name the key path. Safe reading of the YAML itself and the overrides are in
lamina.train.job_yaml.

A job has the sections data, model, loss, optimizer, scheduler, algorithm, trainer and
distributed. Every key is checked; an unknown key is an error that lists the allowed ones.
Each section is read in one place, its class in `lamina.train.sections` (or here, for the
trainer and distributed sections, whose checks span the job); `validate` checks what
spans sections and returns the `Job` that `lamina.train.job` builds.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from lamina.nn.registry import from_config
from lamina.schema import ConfigError, check_args
from lamina.train import callbacks as cb
from lamina.train.algorithms import Algorithm
from lamina.train.job_yaml import apply_override, read_yaml
from lamina.train.losses import METRICS
from lamina.train.sections import (
    AlgorithmConfig,
    DataConfig,
    LossConfig,
    OptimizerConfig,
    SchedulerConfig,
    at_least,
    builds,
    typed,
)

SECTIONS = ("name", "data", "model", "loss", "optimizer", "scheduler", "algorithm", "trainer",
            "distributed")


@dataclasses.dataclass
class DistributedConfig:
    """The `distributed` section: data-parallel training with parameter servers on Ray."""

    workers: int = 2
    servers: int = 1
    mode: Literal["bsp", "ssp", "asp"] = "bsp"
    staleness: int = 2
    address: str | None = None
    checkpoint_every: int = 50
    timeout: float = 120.0


@dataclasses.dataclass
class TrainerConfig:
    """The `trainer` section."""

    epochs: int
    seed: int = 0
    out_dir: str = "runs"
    metrics: list[str] = dataclasses.field(default_factory=lambda: ["accuracy"])
    checkpoint_every: int = 1
    checkpoint_unit: Literal["epoch", "iteration"] = "epoch"
    keep_best: str | None = "val_loss"
    keep_best_mode: Literal["min", "max"] = "min"
    early_stopping: dict | None = None
    clip_grad_norm: float | None = None
    clip_grad_value: float | None = None
    progress: bool = True
    tensorboard: bool = True  # TensorBoard logs beside metrics.csv, when installed
    compile: bool | dict = False  # or lamina.plan.compile's options: {tune, threads, verify}


@dataclasses.dataclass
class Job:
    """A validated job: every section typed, defaults filled in. `to_dict` is the resolved
    job file (what a run writes to config.yaml, and validates again to the same Job)."""

    name: str
    data: DataConfig
    model: dict[str, Any]  # a layer config, as `lamina.nn.from_config` takes it
    loss: LossConfig
    optimizer: OptimizerConfig
    scheduler: SchedulerConfig | None
    algorithm: AlgorithmConfig
    trainer: TrainerConfig
    distributed: DistributedConfig | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "data": self.data.to_dict(), "model": self.model,
                "loss": self.loss.to_dict(), "optimizer": self.optimizer.to_dict(),
                "scheduler": None if self.scheduler is None else self.scheduler.to_dict(),
                "algorithm": self.algorithm.to_dict(),
                "trainer": dataclasses.asdict(self.trainer),
                "distributed": (None if self.distributed is None
                                else dataclasses.asdict(self.distributed))}


def load_config(path: str | os.PathLike, overrides: Sequence[str] = ()) -> Job:
    """Read a YAML job, apply `key.path=value` overrides, and validate it.

    Raises:
        ConfigError: a malformed file or any invalid key, named by its path.
    """
    import yaml

    path = Path(path)
    try:
        raw = read_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such job file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a folder; give the job's YAML file") from None
    except PermissionError:
        raise ConfigError(f"{path}: cannot be read (permission denied)") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a text file (a job is YAML, in UTF-8)") from None
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a job must be a mapping of sections {list(SECTIONS)}")
    raw.setdefault("name", path.stem)
    for item in overrides:
        apply_override(raw, item)
    return validate(raw)


def _unknown(keys: Any, allowed: Sequence[str], path: str) -> None:
    for key in keys:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{path}{key}: unknown key{hint}; allowed: {sorted(allowed)}")


def _section(config: Mapping[str, Any], name: str, required: bool = True) -> Any:
    value = config.get(name)
    if value is None and required:
        raise ConfigError(f"{name}: missing section")
    return value


def layer_config_path(model_config: Any, names: Sequence[str]) -> str | None:
    """Where the layer at a dotted model path (its names, outermost first) is written in
    the job: `model.layers[1].layers[0]` through nested `layers` lists; None where the
    path leaves them (a Concat's branches, a Residual's shortcut)."""
    where, node = "model", model_config
    for name in names:
        layers = node.get("layers") if isinstance(node, Mapping) else None
        if not (isinstance(layers, list) and name.isdigit() and int(name) < len(layers)):
            return None
        where, node = f"{where}.layers[{name}]", layers[int(name)]
    return where


def validate(config: Mapping[str, Any]) -> Job:
    """Check every section, and what spans sections; return the typed job."""
    _unknown(config, SECTIONS, "")
    data = DataConfig.parse(_section(config, "data"))
    model_config = _section(config, "model")
    model = from_config(model_config, "model")  # every layer error names its path
    loss = LossConfig.parse(config.get("loss", "cross_entropy"))
    optimizer, probe = OptimizerConfig.parse(_section(config, "optimizer"),
                                             model.named_parameters())
    scheduler = SchedulerConfig.parse(config.get("scheduler"), probe)
    algorithm = AlgorithmConfig.parse(config.get("algorithm", "bp"))
    trainer = typed(TrainerConfig, _section(config, "trainer"), "trainer")
    _check_trainer(trainer, algorithm.type)
    job = Job(_run_name(config["name"]), data, model_config, loss, optimizer, scheduler,
              algorithm, trainer)
    if data.val_fraction == 0:
        _without_validation(job, config)
    _check_watched(job, builds("algorithm", algorithm.build))
    job.distributed = _distributed(config.get("distributed"), job)
    return job


def _run_name(name: Any) -> str:
    """The run's folder name under trainer.out_dir: one plain name, so the run can be
    written nowhere else."""
    text = str(name)
    if not text.strip() or text.startswith(".") or any(c in text for c in "/\\\0"):
        raise ConfigError(f"name: {text!r} is not a plain folder name (no / or \\, not "
                          "starting with .); the run is written to trainer.out_dir/<name>, "
                          "and a path here would put it elsewhere")
    return text


def _without_validation(job: Job, raw: Mapping[str, Any]) -> None:
    """With `data.val_fraction: 0` there are no val_* metrics. A default that watches one
    falls back (no best checkpoint; a plateau schedule watches the training loss); a value
    the user wrote (or early stopping, which exists only to watch one) is an error."""
    scheduler = raw.get("scheduler")
    written = {"trainer.keep_best": "keep_best" in raw["trainer"],
               "trainer.early_stopping.monitor": True,
               "scheduler.monitor": isinstance(scheduler, Mapping) and "monitor" in scheduler}
    for path, metric in _watched(job):
        if not metric.startswith("val_"):
            continue
        if written[path]:
            raise ConfigError(f"{path}: {metric!r} is measured on validation data, and "
                              "data.val_fraction is 0; hold some out (val_fraction: 0.1) or "
                              f"watch a training metric ({metric.removeprefix('val_')!r})")
        if path == "trainer.keep_best":
            job.trainer.keep_best = None
        else:
            job.scheduler.monitor = "loss"  # type: ignore[union-attr]


def _watched(job: Job) -> list[tuple[str, str]]:
    """(path, metric) of every metric the run watches: best checkpoint, early stopping,
    the plateau schedule."""
    trainer, scheduler = job.trainer, job.scheduler
    out = []
    if trainer.keep_best is not None:
        out.append(("trainer.keep_best", trainer.keep_best))
    if trainer.early_stopping is not None:
        out.append(("trainer.early_stopping.monitor",
                    trainer.early_stopping.get("monitor", "val_loss")))
    if scheduler is not None and scheduler.type == "ReduceLROnPlateau":
        out.append(("scheduler.monitor", scheduler.monitor))
    return out


def _check_watched(job: Job, algorithm: Algorithm) -> None:
    """A watched metric the run never reports (a typo) is an error now, not a KeyError
    after the first epoch. Skipped for an algorithm that does not declare `reports`."""
    if "reports" not in type(algorithm).__dict__:
        return
    algorithm.bind(job.loss.to_dict(), job.trainer.metrics)
    names = list(algorithm.reports(train=True))
    if job.data.val_fraction > 0:
        names += [f"val_{n}" for n in algorithm.reports(train=False)]
    if job.scheduler is not None:
        names.append("lr")
    for path, metric in _watched(job):
        if metric not in names:
            close = difflib.get_close_matches(str(metric), names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{path}: the run reports no metric {metric!r}{hint}; it "
                              f"reports {names}")


def _distributed(section: Any, job: Job) -> DistributedConfig | None:
    if not section:
        return None
    d = typed(DistributedConfig, section, "distributed")
    for name, low in (("workers", 1), ("servers", 1), ("staleness", 0),
                      ("checkpoint_every", 1)):
        at_least(f"distributed.{name}", getattr(d, name), low)
    if any("lr" in g for g in job.optimizer.groups or []):
        raise ConfigError("distributed: optimizer.groups cannot set lr with distributed "
                          "training (the driver sends the servers one rate); set the other "
                          "hyper-parameters per group, or train locally")
    if job.scheduler is not None and job.scheduler.interval != "epoch":
        raise ConfigError("distributed: scheduler.interval must be 'epoch' with distributed "
                          "training (the driver sets the servers' rate once per epoch)")
    return d


def _check_trainer(trainer: TrainerConfig, algorithm: str) -> None:
    at_least("trainer.epochs", trainer.epochs, 1)
    at_least("trainer.seed", trainer.seed, 0)
    at_least("trainer.checkpoint_every", trainer.checkpoint_every, 1)
    for key in ("clip_grad_norm", "clip_grad_value"):
        value = getattr(trainer, key)
        if value is not None and not value > 0:
            raise ConfigError(f"trainer.{key}: must be > 0, got {value}")
    for i, m in enumerate(trainer.metrics):
        if m not in METRICS:
            raise ConfigError(f"trainer.metrics[{i}]: unknown metric {m!r}; "
                              f"one of {sorted(METRICS)}")
    if trainer.compile is not False and algorithm not in ("bp", "bptt"):
        raise ConfigError(f"trainer.compile: execution plans are available for the bp and "
                          f"bptt algorithms; got algorithm {algorithm!r}")
    if isinstance(trainer.compile, dict):
        from lamina.plan import compile

        check_args(compile, trainer.compile, "trainer.compile",
                   skip=("model", "loss_fn", "example_batch"))
        if algorithm == "bptt" and trainer.compile.get("threads", 1) != 1:
            raise ConfigError("trainer.compile.threads: bptt carries each recurrent layer's "
                              "state with the batch's rows on axis 1, which a plan cannot "
                              "split over threads; leave threads at 1")
    if trainer.early_stopping is not None:
        check_args(cb.EarlyStopping, trainer.early_stopping, "trainer.early_stopping")
        builds("trainer.early_stopping", lambda: cb.EarlyStopping(**trainer.early_stopping))
    if algorithm == "cd" and trainer.keep_best == "val_loss":
        trainer.keep_best = "val_recon_error"  # CD reports no validation loss
