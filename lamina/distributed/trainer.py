"""The driver's side of a distributed run: a Trainer whose epochs run on the workers."""

from __future__ import annotations

from typing import Any

from lamina.nn.layer import Layer
from lamina.train.callbacks import Callback
from lamina.train.trainer import Trainer


class DistributedTrainer(Trainer):
    """Runs each epoch on the cluster's workers; evaluates and checkpoints on the driver.

    After every epoch the driver's replica takes the servers' parameters and the workers'
    averaged batch-norm statistics (given back to the workers too), so evaluation and
    checkpoints see one consistent model. The optimizer lives on the servers.
    """

    def __init__(self, cluster: Any, model: Layer, loss: Any, algorithm: Any,
                 metrics: list[str], callbacks: list[Callback], schedule: Any = None) -> None:
        super().__init__(model, schedule, loss, algorithm, metrics, callbacks)
        self.cluster = cluster

    def _train_epoch(self, train_loader: Any) -> None:
        # `self.optimizer`, when given, only carries the learning-rate schedule: the driver
        # steps it per epoch and the servers' optimizers take its rate.
        if self.optimizer is not None:
            self.cluster.set_lr(self.optimizer.param_groups[0]["lr"])
        self._call("on_epoch_start")
        logs = self.cluster.train_epoch(self.epoch)
        seen = logs.pop("seen")
        self._totals, self._seen = {k: v * seen for k, v in logs.items()}, seen
        batches = self.cluster.batches_per_epoch()
        self.iteration += batches
        self.last_batch_size = seen  # the epoch is one "batch" for the driver's callbacks
        self._call("on_batch_end", dict(logs))  # progress, the NaN guard on the loss
        self.cluster.pull_into(self.model)
        self.cluster.sync_buffers(self.model)
        self.epoch += 1
        self.batch_in_epoch = 0
        self.cluster.save()
