"""Optimizers from configs: a job's optimizer section, with per-group hyper-parameters."""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from lamina.optim.adadelta import Adadelta, Adamax
from lamina.optim.adagrad import Adagrad
from lamina.optim.adam import Adam, AdamW
from lamina.optim.adam_variants import NAdam, RAdam
from lamina.optim.asgd import ASGD
from lamina.optim.groups import constructor_hyper_parameters
from lamina.optim.optimizer import Optimizer
from lamina.optim.rmsprop import RMSprop
from lamina.optim.rprop import Rprop
from lamina.optim.sgd import SGD
from lamina.optim.sparse_adam import SparseAdam
from lamina.registry import Registry

# The optimizers a job file can name: those that step without a closure (LBFGS needs one)
OPTIMIZERS = Registry("optimizer")
for _cls in (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop,
             SparseAdam):
    OPTIMIZERS.add(_cls.__name__, _cls)


def from_config(config: Mapping[str, Any], params: Iterable[Any],
                strict: bool = True) -> Optimizer:
    """An optimizer from a config such as a job's optimizer section:
    `from_config({"type": "SGD", "lr": 0.1, "momentum": 0.9}, model.parameters())`; the
    parameters may come with their names (`model.named_parameters()`).

    `groups` gives some parameters their own hyper-parameters; it needs named parameters
    (`model.named_parameters()`). Each group lists glob patterns over the names; a
    parameter joins the first group with a pattern that matches it, and the rest keep the
    top-level values (the first group of the optimizer):

        {"type": "AdamW", "lr": 2e-3, "weight_decay": 0.05,
         "groups": [{"params": ["*.bias", "1.*"], "weight_decay": 0.0}]}

    Raises:
        ValueError: an unknown type; with `strict`, a pattern that matches no parameter
            (`strict=False` skips it: a parameter server holds only some of them).
        TypeError: groups without parameter names.
    """
    options = dict(config)
    name = options.pop("type", None)
    cls = OPTIMIZERS.lookup(name, "optimizer.type")
    groups = options.pop("groups", None)
    params = list(params)
    named = bool(params) and all(isinstance(item, tuple) and len(item) == 2
                                 and isinstance(item[0], str) for item in params)
    if groups:
        if not named:
            raise TypeError("optimizer.groups: needs named parameters, e.g. "
                            "model.named_parameters()")
        _check_group_keys(cls, groups)
        params = _grouped(params, groups, strict)
    elif named:
        params = [p for _, p in params]
    return cls(params, **options)


def _check_group_keys(cls: type, groups: list[Mapping[str, Any]]) -> None:
    """A job file's group may set only the optimizer's hyper-parameters: in a file, any
    other key is a mistake (an optimizer built in code keeps one, as PyTorch does)."""
    allowed = sorted(constructor_hyper_parameters(cls))
    for i, group in enumerate(groups):
        for key in group:
            if key != "params" and key not in allowed:
                near = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f" (did you mean {near[0]!r}?)" if near else ""
                raise ValueError(f"optimizer.groups[{i}]: {key!r} is not a hyper-parameter "
                                 f"of {cls.__name__}{hint}; one of {allowed}")


def _grouped(named: list[Any], groups: list[Mapping[str, Any]], strict: bool
             ) -> list[dict[str, Any]]:
    taken: set[str] = set()
    out = []
    for i, group in enumerate(groups):
        matched = {pat: {n for n, _ in named if fnmatch.fnmatchcase(n, pat)}
                   for pat in group["params"]}
        for pat, names in matched.items():
            if strict and not names:
                raise ValueError(f"optimizer.groups[{i}].params: {pat!r} matches no parameter; "
                                 f"the names are like {[n for n, _ in named[:4]]}")
        mine = set().union(*matched.values()) - taken
        chosen = [(n, p) for n, p in named if n in mine]
        taken.update(mine)
        if chosen:
            out.append({**group, "params": [p for _, p in chosen]})
    rest = [p for n, p in named if n not in taken]
    return ([{"params": rest}] if rest else []) + out
