"""What a training algorithm is: the `Algorithm` base class, the registry that names
algorithms for job configs, and the base of those whose steps may run as execution plans.

An algorithm sees the model, a batch and the updater; it never touches an optimizer, so
the same class runs locally and against a parameter server. The built-in ones (bp, bptt,
cd) are registered by lamina.train.algorithms, which imports them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.registry import Registry
from lamina.train.losses import get_loss, get_metric

_ALGORITHMS = Registry("algorithm")


def register_algorithm(name: str) -> Callable[[type[Algorithm]], type[Algorithm]]:
    """Register an Algorithm subclass under a name; its __init__ keywords are config fields.

    Examples:
        >>> @train.register_algorithm("bp_twice")
        ... class Twice(train.BP):
        ...     def train_one_batch(self, model, batch, updater):
        ...         super().train_one_batch(model, batch, updater)
        ...         return super().train_one_batch(model, batch, updater)
    """
    def decorate(cls: type[Algorithm]) -> type[Algorithm]:
        if not (isinstance(cls, type) and issubclass(cls, Algorithm)):
            raise TypeError(f"register_algorithm({name!r}): {cls!r} is not an Algorithm")
        _ALGORITHMS.add(name, cls)
        return cls

    return decorate


def algorithm_class(name: str) -> type[Algorithm]:
    """The Algorithm class registered under `name`."""
    return _ALGORITHMS.lookup(name)


def algorithm_from_config(section: Mapping[str, Any]) -> Algorithm:
    """An algorithm from a job's algorithm section: `{"type": "bptt", "bptt_steps": 32}`."""
    options = {k: v for k, v in section.items() if k != "type"}
    return algorithm_class(section["type"])(**options)


def algorithm_names() -> list[str]:
    """The registered algorithm names, sorted."""
    return _ALGORITHMS.names()


class Algorithm:
    """Base class. The Trainer sets `loss` and `metrics` before training starts."""

    loss: Callable[[Tensor, Any], Tensor] = staticmethod(get_loss("cross_entropy"))
    metrics: dict[str, Callable[[Tensor, Tensor], float]] = {}
    compiled = False  # run steps through lamina.plan (bp and bptt)
    # One updater step per batch, which ends it: a distributed worker restarted after that
    # step goes on from the next batch with the state it had then, exactly. BPTT steps
    # once per chunk; a worker restarted inside a batch redoes the batch.
    one_step_per_batch = True

    def use_plan(self, on: bool | dict[str, Any]) -> None:
        """Run this algorithm's steps as compiled execution plans (True, or a dict of
        `lamina.plan.compile`'s options)."""
        if _wants_plan(on):
            raise ValueError(f"{type(self).__name__}: compiled execution plans are available "
                             "for the bp and bptt algorithms only; set trainer.compile: false")

    def bind(self, loss: Any, metrics: list[str]) -> Algorithm:
        """Set the loss (a name or callable) and the metric names; called by the Trainer."""
        self.loss = get_loss(loss)
        self.metrics = {m: get_metric(m) for m in metrics}
        return self

    def reports(self, train: bool) -> list[str] | None:
        """The metric names train_one_batch (or test_one_batch) returns, once bound; None
        when unknown until it runs. A class that defines this lets a job refuse a watched
        metric it will never report (a typo) before training starts."""
        return None

    def train_one_batch(self, model: Layer, batch: tuple[Tensor, ...], updater: Any
                        ) -> dict[str, float]:
        """Learn from one batch through the updater (pull, push gradients, step); return
        the batch's metrics."""
        raise NotImplementedError

    def test_one_batch(self, model: Layer, batch: tuple[Tensor, ...]) -> dict[str, float]:
        """Measure the model on one batch, learning nothing; return the metrics."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint must keep to resume this algorithm exactly (arrays allowed)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""

    def _scores(self, output: Tensor, target: Tensor, loss: Tensor) -> dict[str, float]:
        logs = {"loss": loss.item()}
        logs.update({name: fn(output, target) for name, fn in self.metrics.items()})
        return logs


def _loss_and_metrics(self: Algorithm, train: bool) -> list[str]:
    """The loss and the bound metrics (what `_scores` returns), in training and test."""
    return ["loss", *self.metrics]


class _Planned(Algorithm):
    """An algorithm whose steps may run as execution plans, one per model and mode."""

    def use_plan(self, on: bool | dict[str, Any]) -> None:
        self.compiled = _wants_plan(on)
        self.plan_options = dict(on) if isinstance(on, dict) else {}
        self.plans: dict[int, Any] = {}

    def _plan(self, model: Layer, train: bool) -> Any:
        from lamina.plan import compile

        key = id(model) * 2 + train
        if key not in self.plans:
            self.plans[key] = compile(model, self._plan_loss() if train else None,
                                      **self.plan_options)
        return self.plans[key]

    def _plan_loss(self) -> Callable[[Tensor, Any], Tensor]:
        return self.loss


def _push_grads(model: Layer, updater: Any) -> None:
    """Push every gradient in .grad once backward has finished (a plan's, or the slices'
    summed), rather than streaming them as eager backward makes them."""
    for name, p in model.named_parameters():
        if p.grad is not None:
            updater.push(name, p.grad.array)


def _wants_plan(on: bool | dict[str, Any]) -> bool:
    """trainer.compile asks for plans: True, or a dict of lamina.plan.compile's options."""
    return on is True or isinstance(on, dict)
