"""Schedules that scale the initial learning rate by a factor: a user's function of the
step (LambdaLR), a product of them (MultiplicativeLR), a constant warm-up factor, a
polynomial decay, and several schedules' factors at once (ChainedScheduler)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina.optim.lr_scheduler.base import LRScheduler
from lamina.optim.optimizer import Optimizer

Factor = Callable[[int], float]


def _per_group(optimizer: Optimizer, fn: Factor | Sequence[Factor], name: str
               ) -> list[Factor]:
    groups = len(optimizer.param_groups)
    fns = list(fn) if isinstance(fn, (list, tuple)) else [fn] * groups
    if len(fns) != groups:
        raise ValueError(f"{name}: expected {groups} lr_lambdas, one per group; got {len(fns)}")
    return fns


class LambdaLR(LRScheduler):
    """lr = initial lr * lr_lambda(step), one function or one per group.

    Examples:
        >>> LambdaLR(opt, lambda step: 0.95 ** step)
    """

    chainable = False  # a function is not a config value

    def __init__(self, optimizer: Optimizer, lr_lambda: Factor | Sequence[Factor],
                 last_epoch: int = -1) -> None:
        self.lr_lambdas = _per_group(optimizer, lr_lambda, "LambdaLR")
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]

    def state_dict(self) -> dict[str, Any]:
        """The position, without the functions (rebuilt by the code that made them)."""
        return {k: v for k, v in super().state_dict().items() if k != "lr_lambdas"}


class MultiplicativeLR(LambdaLR):
    """lr(step) = lr(step - 1) * lr_lambda(step): the product of the factors so far.

    Examples:
        >>> MultiplicativeLR(opt, lambda step: 0.95)
    """

    def get_lr(self) -> list[float]:
        if self.last_epoch <= 0:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * fn(self.last_epoch)
                for g, fn in zip(self.optimizer.param_groups, self.lr_lambdas)]

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the position; the rates themselves come back with the optimizer's state
        (each is the last one times a factor, not a function of the step)."""
        self.__dict__.update(state)


class ConstantLR(LRScheduler):
    """lr = initial lr * factor until `total_iters` steps, then the initial lr (a warm-up).

    Examples:
        >>> ConstantLR(opt, factor=0.5, total_iters=4)
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1]; got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, step: int) -> float:
        return base_lr * (self.factor if step < self.total_iters else 1.0)


class PolynomialLR(LRScheduler):
    """lr = initial lr * (1 - min(step, total_iters) / total_iters) ** power.

    Examples:
        >>> PolynomialLR(opt, total_iters=100, power=2.0)
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        if total_iters < 1:
            raise ValueError(f"PolynomialLR: total_iters must be >= 1; got {total_iters}")
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, step: int) -> float:
        return base_lr * (1 - min(step, self.total_iters) / self.total_iters) ** self.power


class ChainedScheduler(LRScheduler):
    """Several schedules at once, stepped together: their factors on the initial lr
    multiply (PyTorch's ChainedScheduler of multiplicative schedules, such as a
    ConstantLR warm-up with an ExponentialLR decay).

    Examples:
        >>> ChainedScheduler([ConstantLR(opt, 0.1, 2), ExponentialLR(opt, 0.9)])
    """

    chainable = False

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
                 ) -> None:
        self._schedulers = list(schedulers)
        if not self._schedulers:
            raise ValueError("ChainedScheduler: expected at least one schedule")
        optimizer = optimizer or self._schedulers[0].optimizer
        if any(s.optimizer is not optimizer for s in self._schedulers):
            raise ValueError("ChainedScheduler: every schedule must drive the same optimizer")
        super().__init__(optimizer, -1)

    def get_lr(self) -> list[float]:
        lrs = list(self.base_lrs)
        for s in self._schedulers:
            s.last_epoch = self.last_epoch
            lrs = [lr * new / base if base else 0.0
                   for lr, new, base in zip(lrs, s.get_lr(), s.base_lrs)]
        return lrs

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in super().state_dict().items() if k != "_schedulers"}
        return {**state, "_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for s, saved in zip(self._schedulers, state["_schedulers"]):
            s.load_state_dict(saved)
        super().load_state_dict({k: v for k, v in state.items() if k != "_schedulers"})
