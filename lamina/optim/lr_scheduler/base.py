"""The base of the learning-rate schedules, stepped per epoch or per iteration by whoever
calls `step()`.

Each schedule is a closed form of the step count, so resuming from a state dict lands on
exactly the same learning rate as an uninterrupted run.
"""

from __future__ import annotations

from typing import Any

from lamina.optim.optimizer import Optimizer


class LRScheduler:
    """Base class: sets each group's lr to `lr_at(base_lr, step)` on every `step()`.

    The constructor applies the step after `last_epoch` (step 0 for a new schedule), as
    PyTorch's schedulers do; resuming at a later `last_epoch` needs the groups'
    `initial_lr`, which a schedule records.

    A subclass that a SequentialLR of a job file can hold (all arguments plain values)
    keeps `chainable`.
    """

    chainable = True

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                               "when resuming an optimizer")
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def get_lr(self) -> list[float]:
        """The learning rate of each group at the current step."""
        return [self.lr_at(base, self.last_epoch) for base in self.base_lrs]

    def lr_at(self, base_lr: float, step: int) -> float:
        """The learning rate at `step` for a group whose initial rate is `base_lr`."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch or iteration (or go to `epoch`, PyTorch's deprecated form)
        and set the new learning rates."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        self._apply()

    def _apply(self) -> None:
        """Set the optimizer's hyper-parameters for the current step."""
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr

    def get_last_lr(self) -> list[float]:
        """The learning rate of each group after the last step."""
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The schedule's settings and position, JSON-safe, for checkpoints."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a `state_dict` and set the learning rates of that position."""
        self.__dict__.update({k: (list(v) if isinstance(v, tuple) else v)
                              for k, v in state.items()})
        if self.last_epoch >= 0:
            self._apply()


def chainable() -> dict[str, type[LRScheduler]]:
    """Every schedule class a job's SequentialLR can hold, by name (subclasses included)."""
    found: dict[str, type[LRScheduler]] = {}
    todo = list(LRScheduler.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.chainable and not cls.__name__.startswith("_"):
            found[cls.__name__] = cls
    return dict(sorted(found.items()))
