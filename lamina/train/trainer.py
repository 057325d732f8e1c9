"""The Trainer: a short, visible loop; everything else is a callback."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lamina import runtime
from lamina.autograd.grad_mode import no_grad
from lamina.io.checkpoint import CheckpointError
from lamina.io.checkpoint import load as load_checkpoint
from lamina.nn.layer import Layer
from lamina.random import get_rng_state, set_rng_state
from lamina.train.algorithms import Algorithm, algorithm_class
from lamina.train.callbacks import Callback
from lamina.train.updater import LocalUpdater


class Trainer:
    """Trains a model with an algorithm through an updater, calling callbacks on the way.

    Args:
        model: the layer to train.
        optimizer: an optimizer over the model's parameters.
        loss: a loss name ('cross_entropy', 'mse_loss', ...) or a callable(output, target).
        algorithm: 'bp', 'bptt', 'cd', a registered name, or an Algorithm instance.
        metrics: metric names computed on every batch ('accuracy').
        callbacks: Callback instances (progress, CSV, plots, checkpoints, early stopping...).
        compile: run training and evaluation steps as execution plans (`lamina.plan`),
            traced once per batch shape (bp only): True, or a dict of
            `lamina.plan.compile`'s options ({"tune": True, "threads": 2}).

    Examples:
        >>> train_set, val_set = data.random_split(train_set, [0.9, 0.1], seed=0)
        >>> trainer = Trainer(model, optim.Adam(model.parameters()), "cross_entropy",
        ...                   callbacks=[ProgressBar()])
        >>> trainer.fit(DataLoader(train_set, 32, shuffle=True), epochs=10,
        ...             val_loader=DataLoader(val_set, 500))
        >>> trainer.evaluate(test_loader)["accuracy"]  # the test set, looked at once
    """

    def __init__(self, model: Layer, optimizer: Any, loss: Any = "cross_entropy",
                 algorithm: str | Algorithm = "bp", metrics: Sequence[str] = ("accuracy",),
                 callbacks: Iterable[Callback] = (), compile: bool | dict[str, Any] = False
                 ) -> None:
        runtime.tune_process()  # malloc keeps freed memory (LAMINA_TUNE_PROCESS=0: not)
        self.model, self.optimizer = model, optimizer
        if isinstance(algorithm, str):
            algorithm = algorithm_class(algorithm)()
        self.algorithm = algorithm.bind(loss, list(metrics))
        self.algorithm.use_plan(compile)
        self.callbacks = list(callbacks)
        self.updater = LocalUpdater(model, optimizer, [self._before_step])
        self.epoch = self.iteration = self.batch_in_epoch = 0
        self.epochs = 0
        self._totals: dict[str, float] = {}  # sums of this epoch's batch metrics so far
        self._seen = 0
        self.history: list[dict[str, float]] = []
        self.last_checkpoint: Path | None = None
        self.last_batch_size = 0
        self.batch: Any = None  # the latest batch trained on (a NaN guard reads it)
        self.train_loader: Any = None
        self.stop_reason: str | None = None
        self.stopped_now = False

    def _reset_epoch_sums(self) -> None:
        self._totals, self._seen = {}, 0

    def _call(self, hook: str, *args: Any) -> None:
        for cb in self.callbacks:
            getattr(cb, hook)(self, *args)

    def _end_epoch(self, logs: dict[str, float]) -> None:
        """on_epoch_end for every callback even when one raises (a watched metric that is
        missing), so a Checkpoint listed after it still saves the epoch; then the first
        error is raised."""
        errors = []
        for cb in self.callbacks:
            try:
                cb.on_epoch_end(self, logs)
            except Exception as e:  # noqa: BLE001 - re-raised below, after the others ran
                errors.append(e)
        if errors:
            raise errors[0]

    def _before_step(self, params: list[Any]) -> None:
        self._call("before_step", params)

    def stop(self, reason: str, now: bool = False) -> None:
        """Ask the loop to end after the current epoch (early stopping), or with `now`
        after the current batch (Ctrl-C; a checkpoint then saves the place in the epoch)."""
        self.stop_reason = reason
        self.stopped_now = self.stopped_now or now

    def fit(self, train_loader: Any, epochs: int, val_loader: Any = None
            ) -> list[dict[str, float]]:
        """Train until `epochs` epochs are done (counting those of a resumed run).

        Returns:
            The history: one dict of averaged metrics per epoch (val_* from val_loader).
        """
        self.train_loader, self.epochs, self.stop_reason = train_loader, epochs, None
        self.stopped_now = False
        if self.epoch >= epochs:  # epochs counts from the start, as a resumed run needs
            warnings.warn(f"Trainer.fit: {self.epoch} epochs are already done, so "
                          f"epochs={epochs} trains no more; pass epochs={self.epoch + epochs} "
                          f"for {epochs} more (in a job, --set trainer.epochs="
                          f"{self.epoch + epochs})", RuntimeWarning, stacklevel=2)
        self._call("on_fit_start")
        while self.epoch < epochs and self.stop_reason is None:
            self._start_epoch(train_loader)
            if not self.train_epoch(train_loader):
                break  # stopped inside the epoch: a checkpoint holds its place
            self.epoch += 1
            self.batch_in_epoch = 0
            logs = {"epoch": self.epoch,
                    **{k: v / max(self._seen, 1) for k, v in self._totals.items()}}
            if val_loader is not None:
                logs.update({f"val_{k}": v for k, v in self.evaluate(val_loader).items()})
            self.history.append(logs)
            self._end_epoch(logs)
        self._call("on_fit_end")
        return self.history

    def _start_epoch(self, train_loader: Any) -> None:
        if hasattr(train_loader, "set_epoch"):
            train_loader.set_epoch(self.epoch)  # the order depends on (seed, epoch) only
        self.model.train()
        if not self.batch_in_epoch:  # > 0 only when resuming from a mid-epoch checkpoint
            self._reset_epoch_sums()
        self._call("on_epoch_start")

    def train_epoch(self, train_loader: Any) -> bool:
        """Train on the loader's batches from `batch_in_epoch` on, counting each with
        `record_batch`; return False when stopped inside the epoch. `fit` calls it once an
        epoch, between the callbacks' on_epoch_start and on_epoch_end: the place to
        override for a trainer that trains elsewhere (DistributedTrainer, on a cluster)."""
        done = self.batch_in_epoch
        for i, batch in enumerate(train_loader):
            if i < done:
                continue
            self.batch = batch
            logs = self.algorithm.train_one_batch(self.model, batch, self.updater)
            self.record_batch(logs, len(batch[0]))
            if self.stopped_now:
                return False
        return True

    def record_batch(self, logs: dict[str, float], size: int, steps: int = 1) -> None:
        """Count `steps` trained batches of `size` samples in all, whose averaged metrics
        are `logs`: the iteration, the place in the epoch and the epoch's sums advance, and
        the callbacks' on_batch_end sees them."""
        self.iteration += steps
        self.batch_in_epoch += steps
        self.last_batch_size = size
        for k, v in logs.items():
            self._totals[k] = self._totals.get(k, 0.0) + v * size
        self._seen += size
        self._call("on_batch_end", logs)

    def evaluate(self, loader: Any) -> dict[str, float]:
        """Average the algorithm's test metrics over a loader, in eval mode, with no graph."""
        was_training = self.model.training
        self.model.eval()
        totals: dict[str, float] = {}
        seen = 0
        with no_grad():
            for batch in loader:
                n = len(batch[0])
                for k, v in self.algorithm.test_one_batch(self.model, batch).items():
                    totals[k] = totals.get(k, 0.0) + v * n
                seen += n
        self.model.train(was_training)
        return {k: v / max(seen, 1) for k, v in totals.items()}

    # -- resume ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything beyond weights and optimizer needed to resume exactly."""
        partial = {"batch": self.batch_in_epoch, "totals": self._totals, "seen": self._seen}
        return {"epoch": self.epoch, "iteration": self.iteration, "history": self.history,
                "partial_epoch": partial if self.batch_in_epoch else None,
                "rng": get_rng_state(), "algorithm": self.algorithm.state_dict(),
                "callbacks": [cb.state_dict() for cb in self.callbacks]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned (weights and optimizer come separately)."""
        self.epoch, self.iteration = int(state["epoch"]), int(state["iteration"])
        self.history = list(state["history"])
        partial = state.get("partial_epoch") or {"batch": 0, "totals": {}, "seen": 0}
        self.batch_in_epoch = int(partial["batch"])
        self._totals, self._seen = dict(partial["totals"]), int(partial["seen"])
        set_rng_state(state["rng"])
        self.algorithm.load_state_dict(state.get("algorithm", {}))
        for cb, cb_state in zip(self.callbacks, state.get("callbacks", [])):
            cb.load_state_dict(cb_state)

    def resume(self, path: str | os.PathLike) -> None:
        """Restore model, optimizer and trainer state from a checkpoint written by Checkpoint."""
        info = load_checkpoint(path, self.model, self.optimizer)
        try:
            self.load_state_dict(info["extra"])
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise CheckpointError(f"{path}: its trainer state is incomplete or malformed "
                                  f"({type(e).__name__}: {e}); it was not written by a "
                                  "Trainer's Checkpoint. Resume from another checkpoint, or "
                                  "start again") from e
        self.last_checkpoint = Path(path)
