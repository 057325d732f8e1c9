"""The sections of a job, each a typed config that reads its part of a job file in one
place: `parse` checks it (every error names the key path) and fills in defaults, `build`
makes its object, and `to_dict` writes it back in the job file's form.

`lamina.train.jobfile` parses a whole job into a `Job` and checks what spans sections;
`lamina.train.job` builds a run from one.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np

import lamina.optim as optim
from lamina.data import dataset_names
from lamina.data.builtin import _LOADERS
from lamina.nn.layer import Parameter
from lamina.optim import lr_scheduler
from lamina.schema import ConfigError, check_args
from lamina.train.algorithms import Algorithm, algorithm_class, algorithm_names
from lamina.train.losses import LOSSES, check_loss_args


def typed(cls: Any, values: Any, path: str) -> Any:
    """`cls(**values)` for a dataclass section, its keys and types checked."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{path}: expected a mapping, got {type(values).__name__} {values!r}")
    check_args(cls, values, path)
    return cls(**values)


def named(section: Any, path: str, choices: Sequence[str], key: str = "type",
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


def builds(path: str, make: Callable[[], Any]) -> Any:
    """Build a section's object now, on stand-ins (an optimizer over one probe parameter),
    so that a value its constructor refuses (a negative learning rate) is a config error
    naming the section before any run starts, in the constructor's own words."""
    try:
        return make()
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{path}: {e}") from None


def at_least(path: str, value: Any, low: int) -> None:
    if value < low:
        raise ConfigError(f"{path}: must be >= {low}, got {value}")


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
    options: dict[str, Any] = dataclasses.field(default_factory=dict)  # the dataset's

    @classmethod
    def parse(cls, section: Any) -> DataConfig:
        name, given = named(section, "data", dataset_names(), key="name")
        loader = {k: v for k, v in given.items() if k in LOADER_KEYS}
        data = typed(cls, {"name": name, **loader}, "data")
        for key in ("batch_size", "eval_batch_size"):
            at_least(f"data.{key}", getattr(data, key), 1)
        if not 0 <= data.val_fraction < 1:
            raise ConfigError(f"data.val_fraction: must be in [0, 1), got {data.val_fraction}")
        data.options = {k: v for k, v in given.items() if k not in LOADER_KEYS}
        check_args(_LOADERS[name], data.options, "data")
        return data

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        options = out.pop("options")
        return {**out, **options}


LOADER_KEYS = frozenset(f.name for f in dataclasses.fields(DataConfig)) - {"name", "options"}


@dataclasses.dataclass
class LossConfig:
    """The `loss` section: a loss's name, or {type: name, **its keyword arguments}
    (cross_entropy's weight and label_smoothing, say)."""

    type: str = "cross_entropy"
    args: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def parse(cls, section: Any) -> LossConfig:
        name, args = named(section, "loss", sorted(LOSSES), kind="loss")
        first_two = list(inspect.signature(LOSSES[name]).parameters)[:2]  # output, target
        # the deprecated size_average and reduce have no place in a new job file
        check_args(LOSSES[name], args, "loss", skip=(*first_two, "size_average", "reduce"))
        try:
            check_loss_args(args)
        except ValueError as e:  # its message starts with the argument's name
            raise ConfigError(f"loss.{e}") from None
        return cls(name, args)

    def to_dict(self) -> str | dict[str, Any]:
        """The name alone when it has no arguments: what a Trainer takes as its loss."""
        return {"type": self.type, **self.args} if self.args else self.type


@dataclasses.dataclass
class OptimizerConfig:
    """The `optimizer` section: {type, <hyper-parameters>, groups: [{params: [patterns],
    <hyper-parameter>: value}]}."""

    type: str
    args: dict[str, Any]
    groups: list[dict[str, Any]] | None = None

    @classmethod
    def parse(cls, section: Any, parameter_names: Sequence[tuple[str, Any]]
              ) -> tuple[OptimizerConfig, optim.Optimizer]:
        """The section, and the optimizer it builds over one probe parameter (for the
        schedule's check). Groups are checked against the model's named parameters."""
        name, args = named(section, "optimizer", optim.OPTIMIZERS)
        groups = args.pop("groups", None)
        check_args(optim.OPTIMIZERS[name], args, "optimizer", skip=("params",))
        config = cls(name, args)
        probe = builds("optimizer", lambda: config.build([Parameter(np.zeros(1, np.float32))]))
        if groups is None:
            return config, probe
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
                if key != "params" and key not in probe.defaults:
                    raise ConfigError(f"optimizer.groups[{i}].{key}: not a hyper-parameter of "
                                      f"{name}; allowed: {sorted(probe.defaults)}")
        config.groups = [dict(g) for g in groups]
        try:
            config.build(parameter_names)
        except ValueError as e:
            message = str(e)
            raise ConfigError(message if message.startswith("optimizer") else
                              f"optimizer.groups: {message}") from None
        return config, probe

    def to_dict(self) -> dict[str, Any]:
        groups = {} if self.groups is None else {"groups": [dict(g) for g in self.groups]}
        return {"type": self.type, **self.args, **groups}

    def build(self, params: Any) -> optim.Optimizer:
        """The optimizer over `params` (named, where there are groups)."""
        return optim.from_config(self.to_dict(), params)


@dataclasses.dataclass
class SchedulerConfig:
    """The `scheduler` section: {type, interval: epoch | iteration, monitor (what
    ReduceLROnPlateau watches), <the schedule's arguments>}."""

    type: str
    args: dict[str, Any]
    interval: Literal["epoch", "iteration"] = "epoch"
    monitor: str = "val_loss"

    @classmethod
    def parse(cls, section: Any, optimizer: optim.Optimizer) -> SchedulerConfig | None:
        if section is None:
            return None
        name, args = named(section, "scheduler", lr_scheduler.SCHEDULES)
        interval = args.pop("interval", "epoch")
        monitor = args.pop("monitor", "val_loss")
        if interval not in ("epoch", "iteration"):
            raise ConfigError(f"scheduler.interval: expected 'epoch' or 'iteration', got "
                              f"{interval!r}")
        check_args(lr_scheduler.SCHEDULES[name], args, "scheduler", skip=("optimizer",))
        if name == "SequentialLR":
            _check_chained(args.get("schedulers"))
        config = cls(name, args, interval, monitor)
        builds("scheduler", lambda: config.build(optimizer))
        return config

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "interval": self.interval, "monitor": self.monitor,
                **self.args}

    def build(self, optimizer: optim.Optimizer) -> Any:
        return lr_scheduler.SCHEDULES[self.type](optimizer, **self.args)


def _check_chained(schedulers: Any) -> None:
    """Each of a SequentialLR's schedules, checked at its own path."""
    if not isinstance(schedulers, list):
        raise ConfigError(f"scheduler.schedulers: expected a list of schedule configs, got "
                          f"{type(schedulers).__name__}")
    for i, child in enumerate(schedulers):
        path = f"scheduler.schedulers[{i}]"
        name, args = named(child, path, lr_scheduler.CHAINABLE,
                           kind="schedule in a SequentialLR")
        check_args(lr_scheduler.SCHEDULES[name], args, path, skip=("optimizer",))


@dataclasses.dataclass
class AlgorithmConfig:
    """The `algorithm` section: a registered algorithm's name, or {type, **its options}."""

    type: str = "bp"
    args: dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def parse(cls, section: Any) -> AlgorithmConfig:
        name, args = named(section, "algorithm", algorithm_names())
        check_args(algorithm_class(name), args, "algorithm")
        return cls(name, args)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.args}

    def build(self) -> Algorithm:
        return algorithm_class(self.type)(**self.args)
