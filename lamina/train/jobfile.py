"""Job files (YAML): reading, `--set` overrides, and validation with errors that name the
key path.

A job has the sections data, model, loss, optimizer, scheduler, algorithm, trainer and
distributed. Every key is checked; an unknown key is an error that lists the allowed ones.
`validate` returns the resolved job (defaults filled in) that `lamina.train.job` builds.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

import lamina.optim as optim
from lamina.data import dataset_names
from lamina.data.builtin import _LOADERS
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import from_config
from lamina.optim import lr_scheduler
from lamina.schema import ConfigError, check_args
from lamina.train import callbacks as cb
from lamina.train.algorithms import (
    Algorithm,
    algorithm_class,
    algorithm_from_config,
    algorithm_names,
)
from lamina.train.losses import LOSSES, METRICS, check_loss_args

SECTIONS = ("name", "data", "model", "loss", "optimizer", "scheduler", "algorithm", "trainer",
            "distributed")
SCHEDULERS = lr_scheduler.SCHEDULES


@dataclasses.dataclass
class DataConfig:
    """The `data` section: a built-in dataset by name plus loader settings; every other key
    is an option of that dataset (shape, path, seq_len...). `val_fraction` of the training
    split is held out for validation (chosen at random by the trainer's seed; for ordered
    data such as a text, its end): the best checkpoint, early stopping and
    ReduceLROnPlateau watch it, so the test split is used only for the final report.
    0 trains on all of it, with no validation."""

    name: str
    batch_size: int = 32
    eval_batch_size: int = 500
    shuffle: bool = True
    drop_last: bool = False
    val_fraction: float = 0.1


LOADER_KEYS = frozenset(f.name for f in dataclasses.fields(DataConfig))


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


def load_config(path: str | os.PathLike, overrides: Sequence[str] = ()) -> dict[str, Any]:
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
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a job must be a mapping of sections {list(SECTIONS)}")
    raw.setdefault("name", path.stem)
    for item in overrides:
        apply_override(raw, item)
    return validate(raw)


def read_yaml(text: str) -> Any:
    """Parse YAML safely, reading `1e-3` as a float. PyYAML follows YAML 1.1, where a float
    needs a dot (`1.0e-3`) and `1e-3` is the string '1e-3'; YAML 1.2, and every user
    writing a learning rate, mean the number."""
    import yaml

    return yaml.load(text, Loader=_loader())  # safe: the loader is a SafeLoader


@functools.cache
def _loader() -> type:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    exponent = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")
    Loader.add_implicit_resolver("tag:yaml.org,2002:float", exponent, list("-+0123456789."))
    return Loader


def apply_override(config: dict[str, Any], item: str) -> None:
    """Set `a.b.c=value` in a nested config; the value is parsed as YAML (3, 0.1, true, [1, 2])."""
    key, sep, text = item.partition("=")
    if not sep or not key:
        raise ConfigError(f"--set {item!r}: expected key.path=value")
    parts = key.split(".")
    node: Any = config
    for i, part in enumerate(parts[:-1]):
        nxt = node[int(part)] if isinstance(node, list) else node.get(part)
        if nxt is None:
            nxt = node[part] = {}
        if not isinstance(nxt, (dict, list)):
            raise ConfigError(f"--set {key}: {'.'.join(parts[:i + 1])} is not a section")
        node = nxt
    last = parts[-1]
    value = read_yaml(text)
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


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


def _typed(cls: Any, values: Any, path: str) -> Any:
    if not isinstance(values, Mapping):
        raise ConfigError(f"{path}: expected a mapping, got {type(values).__name__} {values!r}")
    check_args(cls, values, path)
    return cls(**values)


def _named(section: Any, path: str, choices: Sequence[str], key: str = "type",
           kind: str | None = None) -> tuple[str, dict[str, Any]]:
    """A section given as a name, or as {type: name, **options}; `kind` names what it is
    in messages (the path, by default)."""
    if isinstance(section, str):
        section = {key: section}
    if not isinstance(section, Mapping) or key not in section:
        raise ConfigError(f"{path}: expected a name or a mapping with '{key}'; one of "
                          f"{sorted(choices)}")
    name = section[key]
    if name not in choices:
        close = difflib.get_close_matches(str(name), choices, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{path}.{key}: unknown {kind or path} {name!r}{hint}; one of "
                          f"{sorted(choices)}")
    return name, {k: v for k, v in section.items() if k != key}


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


def _validate_loss(loss: Any) -> str | dict[str, Any]:
    """A loss name, or {type: name, **its keyword arguments} (cross_entropy's weight and
    label_smoothing, say); resolved to the name alone when it has no arguments."""
    name, args = _named(loss, "loss", sorted(LOSSES), kind="loss")
    first_two = list(inspect.signature(LOSSES[name]).parameters)[:2]  # output, target
    # the deprecated size_average and reduce have no place in a new job file
    check_args(LOSSES[name], args, "loss", skip=(*first_two, "size_average", "reduce"))
    try:
        check_loss_args(args)
    except ValueError as e:  # its message starts with the argument's name
        raise ConfigError(f"loss.{e}") from None
    return {"type": name, **args} if args else name


def validate(config: dict[str, Any]) -> dict[str, Any]:
    """Check every section; return the config with defaults filled in (the resolved job)."""
    _unknown(config, SECTIONS, "")
    out: dict[str, Any] = {"name": str(config["name"])}
    data = dict(_section(config, "data"))
    name, options = _named(data, "data", dataset_names(), key="name")
    loader_keys = LOADER_KEYS - {"name"}
    loader = {k: v for k, v in options.items() if k in loader_keys}
    out["data"] = dataclasses.asdict(_typed(DataConfig, {"name": name, **loader}, "data"))
    for key in ("batch_size", "eval_batch_size"):
        _at_least(f"data.{key}", out["data"][key], 1)
    if not 0 <= out["data"]["val_fraction"] < 1:
        raise ConfigError(f"data.val_fraction: must be in [0, 1), got "
                          f"{out['data']['val_fraction']}")
    dataset_options = {k: v for k, v in options.items() if k not in loader_keys}
    check_args(_LOADERS[name], dataset_options, "data")
    out["data"].update(dataset_options)
    out["model"] = _section(config, "model")
    model = from_config(out["model"], "model")  # every layer error names its path
    out["loss"] = _validate_loss(config.get("loss", "cross_entropy"))
    out["optimizer"], opt = _validate_optimizer(_section(config, "optimizer"), model)
    out["scheduler"] = _validate_scheduler(config.get("scheduler"), opt)
    alg_name, alg_args = _named(config.get("algorithm", "bp"), "algorithm", algorithm_names())
    check_args(algorithm_class(alg_name), alg_args, "algorithm")
    out["algorithm"] = {"type": alg_name, **alg_args}
    algorithm = _builds("algorithm", lambda: algorithm_from_config(out["algorithm"]))
    trainer = _typed(TrainerConfig, _section(config, "trainer"), "trainer")
    _check_trainer(trainer, alg_name)
    out["trainer"] = dataclasses.asdict(trainer)
    if out["data"]["val_fraction"] == 0:
        _without_validation(out, config)
    _check_watched(out, algorithm)
    out["distributed"] = _validate_distributed(config.get("distributed"), out)
    return out


def _without_validation(job: dict[str, Any], raw: dict[str, Any]) -> None:
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
            job["trainer"]["keep_best"] = None
        else:
            job["scheduler"]["monitor"] = "loss"


def _watched(job: dict[str, Any]) -> list[tuple[str, str]]:
    """(path, metric) of every metric the run watches: best checkpoint, early stopping,
    the plateau schedule."""
    trainer, scheduler = job["trainer"], job["scheduler"]
    out = []
    if trainer["keep_best"] is not None:
        out.append(("trainer.keep_best", trainer["keep_best"]))
    if trainer["early_stopping"] is not None:
        out.append(("trainer.early_stopping.monitor",
                    trainer["early_stopping"].get("monitor", "val_loss")))
    if scheduler and scheduler["type"] == "ReduceLROnPlateau":
        out.append(("scheduler.monitor", scheduler["monitor"]))
    return out


def _check_watched(job: dict[str, Any], algorithm: Algorithm) -> None:
    """A watched metric the run never reports (a typo) is an error now, not a KeyError
    after the first epoch. Skipped for an algorithm that does not declare `reports`."""
    if "reports" not in type(algorithm).__dict__:
        return
    algorithm.bind(job["loss"], job["trainer"]["metrics"])
    names = list(algorithm.reports(train=True))
    if job["data"]["val_fraction"] > 0:
        names += [f"val_{n}" for n in algorithm.reports(train=False)]
    if job["scheduler"]:
        names.append("lr")
    for path, metric in _watched(job):
        if metric not in names:
            close = difflib.get_close_matches(str(metric), names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{path}: the run reports no metric {metric!r}{hint}; it "
                              f"reports {names}")


def _validate_optimizer(section: Any, model: Layer) -> tuple[dict[str, Any], Any]:
    """The optimizer section, resolved, and the optimizer it builds over one probe
    parameter (for the schedule's check). Groups are checked against the model's names."""
    name, args = _named(section, "optimizer", optim.OPTIMIZERS)
    groups = args.pop("groups", None)
    check_args(optim.OPTIMIZERS[name], args, "optimizer", skip=("params",))
    out = {"type": name, **args}
    probe = Parameter(np.zeros(1, np.float32))
    opt = _builds("optimizer", lambda: optim.from_config(out, [probe]))
    if groups is None:
        return out, opt
    if not isinstance(groups, list):
        raise ConfigError(f"optimizer.groups: expected a list of {{params: [patterns], "
                          f"<hyper-parameter>: value}}, got {groups!r}")
    for i, group in enumerate(groups):
        patterns = group.get("params") if isinstance(group, Mapping) else None
        if not (isinstance(patterns, list) and patterns
                and all(isinstance(p, str) for p in patterns)):
            raise ConfigError(f"optimizer.groups[{i}].params: expected a list of name "
                              f"patterns such as ['*.bias'], got {patterns!r}")
        for key in group:
            if key != "params" and key not in opt.defaults:
                raise ConfigError(f"optimizer.groups[{i}].{key}: not a hyper-parameter of "
                                  f"{name}; allowed: {sorted(opt.defaults)}")
    out["groups"] = [dict(g) for g in groups]
    try:
        optim.from_config(out, model.named_parameters())
    except ValueError as e:
        message = str(e)
        raise ConfigError(message if message.startswith("optimizer") else
                          f"optimizer.groups: {message}") from None
    return out, opt


def _builds(path: str, make: Callable[[], Any]) -> Any:
    """Build a section's object now, on stand-ins (an optimizer over one probe parameter),
    so that a value its constructor refuses (a negative learning rate) is a config error
    naming the section before any run starts, in the constructor's own words."""
    try:
        return make()
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{path}: {e}") from None


def _at_least(path: str, value: Any, low: int) -> None:
    if value < low:
        raise ConfigError(f"{path}: must be >= {low}, got {value}")


def _validate_distributed(section: Any, job: dict[str, Any]) -> dict[str, Any] | None:
    if not section:
        return None
    d = _typed(DistributedConfig, section, "distributed")
    for name, low in (("workers", 1), ("servers", 1), ("staleness", 0),
                      ("checkpoint_every", 1)):
        _at_least(f"distributed.{name}", getattr(d, name), low)
    if any("lr" in g for g in job["optimizer"].get("groups", [])):
        raise ConfigError("distributed: optimizer.groups cannot set lr with distributed "
                          "training (the driver sends the servers one rate); set the other "
                          "hyper-parameters per group, or train locally")
    if job.get("scheduler") and job["scheduler"]["interval"] != "epoch":
        raise ConfigError("distributed: scheduler.interval must be 'epoch' with distributed "
                          "training (the driver sets the servers' rate once per epoch)")
    return dataclasses.asdict(d)


def _validate_scheduler(section: Any, optimizer: optim.Optimizer) -> dict[str, Any] | None:
    if section is None:
        return None
    name, args = _named(section, "scheduler", SCHEDULERS)
    interval = args.pop("interval", "epoch")
    monitor = args.pop("monitor", "val_loss")
    if interval not in ("epoch", "iteration"):
        raise ConfigError(f"scheduler.interval: expected 'epoch' or 'iteration', got {interval!r}")
    check_args(lr_scheduler.SCHEDULES[name], args, "scheduler", skip=("optimizer",))
    if name == "SequentialLR":
        _check_chained(args.get("schedulers"))
    _builds("scheduler", lambda: lr_scheduler.SCHEDULES[name](optimizer, **args))
    return {"type": name, "interval": interval, "monitor": monitor, **args}


def _check_chained(schedulers: Any) -> None:
    """Each of a SequentialLR's schedules, checked at its own path."""
    if not isinstance(schedulers, list):
        raise ConfigError(f"scheduler.schedulers: expected a list of schedule configs, got "
                          f"{type(schedulers).__name__}")
    for i, child in enumerate(schedulers):
        path = f"scheduler.schedulers[{i}]"
        name, args = _named(child, path, lr_scheduler.CHAINABLE,
                            kind="schedule in a SequentialLR")
        check_args(lr_scheduler.SCHEDULES[name], args, path, skip=("optimizer",))


def _check_trainer(trainer: TrainerConfig, algorithm: str) -> None:
    _at_least("trainer.epochs", trainer.epochs, 1)
    _at_least("trainer.checkpoint_every", trainer.checkpoint_every, 1)
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
        _builds("trainer.early_stopping", lambda: cb.EarlyStopping(**trainer.early_stopping))
    if algorithm == "cd" and trainer.keep_best == "val_loss":
        trainer.keep_best = "val_recon_error"  # CD reports no validation loss
