"""Callbacks: everything around the training loop, each firing on its own trigger.

Hooks, in order: on_fit_start, on_epoch_start, before_step (between the last gradient
push and the optimizer update), on_batch_end, on_epoch_end, on_fit_end.

Here: the base classes and the callbacks that act on training (checkpoints, early
stopping, the learning-rate schedule, gradient clipping, the NaN guard). Those that
report it (the progress bar, metrics.csv, the curves' PNG) are in
lamina.train.logging_callbacks.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina.io.checkpoint import save as save_checkpoint
from lamina.optim.clip import clip_grad_norm_, clip_grad_value_

if TYPE_CHECKING:
    from lamina.train.trainer import Trainer


class NonFiniteError(RuntimeError):
    """The loss or a gradient became NaN or infinite; training stopped before the update."""


class Trigger:
    """Fires every `every` epochs or iterations (`unit`)."""

    def __init__(self, every: int = 1, unit: str = "epoch") -> None:
        if every < 1 or unit not in ("epoch", "iteration"):
            raise ValueError(f"Trigger: every must be >= 1 and unit 'epoch' or 'iteration'; "
                             f"got {every}, {unit!r}")
        self.every, self.unit = every, unit

    def fires(self, trainer: Trainer, unit: str) -> bool:
        """Whether the trigger fires at this point of `unit` ('epoch' or 'iteration')."""
        count = trainer.epoch if unit == "epoch" else trainer.iteration
        return unit == self.unit and count % self.every == 0


class Callback:
    """Base class: override the hooks you need. `state_dict` is saved in checkpoints."""

    def on_fit_start(self, trainer: Trainer) -> None:
        """Before the first epoch of `fit` (after a resume has restored the state)."""

    def on_epoch_start(self, trainer: Trainer) -> None:
        """Before each epoch's first batch."""

    def before_step(self, trainer: Trainer, params: list[Any]) -> None:
        """After the gradients are pushed, before the optimizer applies them."""

    def on_batch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        """After each training batch, with its metrics."""

    def on_epoch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        """After each epoch, with its averaged metrics (val_* included); may add to logs."""

    def on_fit_end(self, trainer: Trainer) -> None:
        """After the last epoch, or after a stop."""

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of this callback, to resume exactly."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""


def monitored(logs: dict[str, float], metric: str, who: str) -> float:
    """The epoch's value of a watched metric; a name that is not there (a typo, or a
    val_* metric in a fit without validation data) is an error, not a silent no-op."""
    if metric not in logs:
        hint = (" (val_* metrics need fit(..., val_loader))" if metric.startswith("val_")
                else "")
        raise KeyError(f"{who}: no metric {metric!r} this epoch{hint}; have {sorted(logs)}")
    return logs[metric]


class Checkpoint(Callback):
    """Saves `last.safetensors` on its trigger and `best.safetensors` when `monitor` improves.

    Every file holds the model, the optimizer and the trainer's state (epoch, iteration,
    history, RNG, scheduler, algorithm), written atomically: a crash leaves the previous one.
    """

    def __init__(self, directory: str | os.PathLike, trigger: Trigger | None = None,
                 monitor: str | None = None, mode: str = "min") -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"Checkpoint: mode must be 'min' or 'max'; got {mode!r}")
        self.directory = Path(directory)
        self.trigger = trigger or Trigger(1, "epoch")
        self.monitor, self.mode = monitor, mode
        self.best: float | None = None

    @property
    def last_path(self) -> Path:
        return self.directory / "last.safetensors"

    def save(self, trainer: Trainer, path: Path) -> None:
        """Write a checkpoint now (refused if a weight is not finite)."""
        for name, p in trainer.model.named_parameters():
            if not np.isfinite(p.array).all():  # never replace a good file with a broken one
                raise NonFiniteError(f"Checkpoint: the weight {name} is not finite; kept "
                                     f"{trainer.last_checkpoint or 'no checkpoint'} as it was")
        save_checkpoint(path, trainer.model, trainer.optimizer, extra=trainer.state_dict())
        trainer.last_checkpoint = path

    def on_batch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        if self.trigger.fires(trainer, "iteration"):
            self.save(trainer, self.last_path)

    def on_epoch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        value = logs.get(self.monitor) if self.monitor is not None else None
        if value is not None and math.isfinite(value) and (
                self.best is None or (value < self.best if self.mode == "min"
                                      else value > self.best)):
            self.best = value
            self.save(trainer, self.directory / "best.safetensors")
        if self.trigger.fires(trainer, "epoch") or trainer.epoch == trainer.epochs:
            self.save(trainer, self.last_path)  # last: what --resume and error notes name
        if self.monitor is not None:
            monitored(logs, self.monitor, "Checkpoint (keep_best)")  # missing: an error

    def on_fit_end(self, trainer: Trainer) -> None:
        if trainer.stop_reason is not None:  # stopped early: keep the place it stopped at
            self.save(trainer, self.last_path)

    def state_dict(self) -> dict[str, Any]:
        return {"best": self.best}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best = state.get("best")


class EarlyStopping(Callback):
    """Stops when `monitor` has not improved by `min_delta` for `patience` epochs."""

    def __init__(self, monitor: str = "val_loss", patience: int = 5, mode: str = "min",
                 min_delta: float = 0.0) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"EarlyStopping: mode must be 'min' or 'max'; got {mode!r}")
        self.monitor, self.patience, self.mode, self.min_delta = monitor, patience, mode, min_delta
        self.best: float | None = None
        self.bad_epochs = 0

    def on_epoch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        value = monitored(logs, self.monitor, "EarlyStopping")
        sign = 1 if self.mode == "min" else -1
        if self.best is None or sign * (self.best - value) > self.min_delta:
            self.best, self.bad_epochs = value, 0
            return
        self.bad_epochs += 1
        if self.bad_epochs >= self.patience:
            trainer.stop(f"early stopping: {self.monitor} has not improved for "
                         f"{self.patience} epochs (best {self.best:.4f})")

    def state_dict(self) -> dict[str, Any]:
        return {"best": self.best, "bad_epochs": self.bad_epochs}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best, self.bad_epochs = state.get("best"), state.get("bad_epochs", 0)


class LRSchedule(Callback):
    """Steps a learning-rate schedule per epoch or per iteration (ReduceLROnPlateau: per
    epoch, on `monitor`)."""

    def __init__(self, scheduler: Any, interval: str = "epoch", monitor: str = "val_loss") -> None:
        if interval not in ("epoch", "iteration"):
            raise ValueError(f"LRSchedule: interval must be 'epoch' or 'iteration'; "
                             f"got {interval!r}")
        self.scheduler, self.interval, self.monitor = scheduler, interval, monitor
        self.plateau = type(scheduler).__name__ == "ReduceLROnPlateau"

    def on_batch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        if self.interval == "iteration" and not self.plateau:
            self.scheduler.step()

    def on_epoch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        if self.plateau:
            self.scheduler.step(monitored(logs, self.monitor, "ReduceLROnPlateau"))
        elif self.interval == "epoch":
            self.scheduler.step()
        logs["lr"] = self.scheduler.get_last_lr()[0]

    def state_dict(self) -> dict[str, Any]:
        return self.scheduler.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.scheduler.load_state_dict(state)


class GradientClipping(Callback):
    """Clips gradients before every update: by joint norm, by value, or both."""

    def __init__(self, max_norm: float | None = None, max_value: float | None = None) -> None:
        self.max_norm, self.max_value = max_norm, max_value

    def before_step(self, trainer: Trainer, params: list[Any]) -> None:
        if self.max_value is not None:
            clip_grad_value_(params, self.max_value)
        if self.max_norm is not None:
            clip_grad_norm_(params, self.max_norm)


def _likely_cause(batch: Any) -> str:
    """The fix to suggest: the data's, where the batch itself holds a NaN or infinity
    (which no learning rate cures), else the learning rate's."""
    for i, part in enumerate(batch or ()):
        a = getattr(part, "array", part)
        if isinstance(a, np.ndarray) and a.dtype.kind == "f" and not np.isfinite(a).all():
            return (f"The batch itself holds a NaN or infinity (part {i} of the batch, shape "
                    f"{tuple(a.shape)}): the data needs cleaning, not the learning rate.")
    return "Lower the learning rate or clip gradients (trainer.clip_grad_norm)."


class NaNGuard(Callback):
    """Stops the run with a clear message when the loss or a gradient is not finite.

    Gradients are checked before the optimizer applies them, so the weights (and the last
    checkpoint on disk) stay those of the last good step.
    """

    def _fail(self, trainer: Trainer, what: str) -> None:
        where = f"epoch {trainer.epoch + 1}, iteration {trainer.iteration + 1}"
        kept = (f"the last good checkpoint is {trainer.last_checkpoint}"
                if trainer.last_checkpoint else "no checkpoint had been written yet")
        raise NonFiniteError(f"{what} at {where}; training stopped before the update, {kept}. "
                             f"{_likely_cause(trainer.batch)}")

    def before_step(self, trainer: Trainer, params: list[Any]) -> None:
        for name, p in trainer.model.named_parameters():
            if p.grad is not None and not np.isfinite(p.grad.array).all():
                self._fail(trainer, f"the gradient of {name} is not finite")

    def on_batch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        loss = logs.get("loss")
        if loss is not None and not math.isfinite(loss):
            self._fail(trainer, f"the loss is {loss}")
