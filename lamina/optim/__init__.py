"""Optimizers, gradient clipping and learning-rate schedules. Import as `lamina.optim`."""

from collections.abc import Iterable, Mapping
from typing import Any

from lamina.optim import lr_scheduler
from lamina.optim.adagrad import Adagrad
from lamina.optim.adam import Adam, AdamW
from lamina.optim.clip import clip_grad_norm_, clip_grad_value_
from lamina.optim.optimizer import Optimizer
from lamina.optim.rmsprop import RMSprop
from lamina.optim.sgd import SGD

OPTIMIZERS = {cls.__name__: cls for cls in (SGD, Adam, AdamW, RMSprop, Adagrad)}


def from_config(config: Mapping[str, Any], params: Iterable[Any]) -> Optimizer:
    """An optimizer from a config such as a job's optimizer section:
    `from_config({"type": "SGD", "lr": 0.1, "momentum": 0.9}, model.parameters())`."""
    options = dict(config)
    name = options.pop("type", None)
    if name not in OPTIMIZERS:
        raise ValueError(f"optimizer: unknown type {name!r}; one of {sorted(OPTIMIZERS)}")
    return OPTIMIZERS[name](params, **options)


__all__ = [
    "SGD",
    "OPTIMIZERS",
    "Adagrad",
    "Adam",
    "AdamW",
    "Optimizer",
    "RMSprop",
    "clip_grad_norm_",
    "clip_grad_value_",
    "from_config",
    "lr_scheduler",
]
