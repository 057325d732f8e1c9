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
                 metrics: list[str], callbacks: list[Callback], optimizer: Any = None) -> None:
        """optimizer: the driver's optimizer over the model, for a learning-rate schedule
        to step: its rate goes to the servers' optimizers each epoch (it never steps the
        parameters, which live on the servers). None keeps the servers' rate."""
        super().__init__(model, optimizer, loss, algorithm, metrics, callbacks)
        self.cluster = cluster

    def train_epoch(self, train_loader: Any) -> bool:
        """One epoch on the cluster's workers (train_loader is the driver's, unused: each
        worker reads its own shard), counted as one batch of the whole epoch's samples."""
        if self.optimizer is not None:
            self.cluster.set_lr(self.optimizer.param_groups[0]["lr"])
        logs = self.cluster.train_epoch(self.epoch)
        seen = logs.pop("seen")
        self.record_batch(logs, seen, steps=self.cluster.batches_per_epoch())
        self.cluster.pull_into(self.model)
        self.cluster.sync_buffers(self.model)
        self.cluster.save(self.epoch + 1)  # fit counts this epoch done next
        return True

    def state_dict(self) -> dict[str, Any]:
        """The trainer's state, with no place inside an epoch: the driver counts a cluster's
        epoch as one batch, and the servers hold any place inside one."""
        return {**super().state_dict(), "partial_epoch": None}
