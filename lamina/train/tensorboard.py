"""A Trainer callback writing each epoch's metrics as TensorBoard scalars, beside
metrics.csv (`lamina train` adds it when the tensorboard extra is installed)."""

from __future__ import annotations

import importlib.util
import os
from typing import TYPE_CHECKING, Any

from lamina.train.callbacks import Callback

if TYPE_CHECKING:
    from lamina.train.trainer import Trainer


def available() -> bool:
    """Whether the tensorboard package is installed."""
    return importlib.util.find_spec("tensorboard") is not None


class TensorBoardLogger(Callback):
    """Every metric of every epoch (`loss`, `val_loss`, `accuracy`, ...) as a scalar at
    step = epoch, and the learning rate; a resumed run drops events from the resumed
    epoch on (TensorBoard's purge step), so a crash leaves no doubled points.

    Examples:
        >>> trainer = Trainer(model, opt, "cross_entropy",
        ...                   callbacks=[TensorBoardLogger("runs/mnist/tensorboard")])
    """

    def __init__(self, log_dir: str | os.PathLike) -> None:
        self.log_dir = log_dir
        self.writer: Any = None

    def on_fit_start(self, trainer: Trainer) -> None:
        from lamina.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(self.log_dir, purge_step=trainer.epoch + 1
                                    if trainer.history else None)

    def on_epoch_end(self, trainer: Trainer, logs: dict[str, float]) -> None:
        step = logs.get("epoch", trainer.epoch)
        for key, value in logs.items():
            if isinstance(value, (int, float)) and key != "epoch":
                self.writer.add_scalar(key, value, step)
        groups = getattr(trainer.optimizer, "param_groups", None)
        if groups:  # (a distributed run's optimizers live on its parameter servers)
            self.writer.add_scalar("lr", groups[0]["lr"], step)
        self.writer.flush()

    def on_fit_end(self, trainer: Trainer) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
