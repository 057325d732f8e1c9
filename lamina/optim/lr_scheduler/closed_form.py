"""The closed-form schedules: step, multi-step, exponential, cosine and linear decay, a
sequence of schedules, and ReduceLROnPlateau (which follows a metric instead)."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

from lamina.optim.lr_scheduler.base import LRScheduler, chainable
from lamina.optim.optimizer import Optimizer


class StepLR(LRScheduler):
    """lr = base * gamma ** (step // step_size)."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if step_size < 1:
            raise ValueError(f"StepLR: step_size must be >= 1; got {step_size}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, step: int) -> float:
        return base_lr * self.gamma ** (step // self.step_size)


class MultiStepLR(LRScheduler):
    """lr = base * gamma ** (number of milestones <= step)."""

    def __init__(self, optimizer: Optimizer, milestones: Sequence[int], gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, step: int) -> float:
        return base_lr * self.gamma ** bisect.bisect_right(self.milestones, step)


class ExponentialLR(LRScheduler):
    """lr = base * gamma ** step."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, step: int) -> float:
        return base_lr * self.gamma**step


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base - eta_min) * (1 + cos(pi * step / T_max)) / 2 (Loshchilov & Hutter)."""

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_max < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be >= 1; got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, step: int) -> float:
        return self.eta_min + (base_lr - self.eta_min) * (
            1 + math.cos(math.pi * step / self.T_max)) / 2


class LinearLR(LRScheduler):
    """Scale lr linearly from start_factor to end_factor over total_iters steps, then hold."""

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: start_factor must be in (0, 1] and end_factor in "
                             f"[0, 1]; got {start_factor}, {end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, step: int) -> float:
        frac = min(step, self.total_iters) / self.total_iters if self.total_iters else 1.0
        return base_lr * (self.start_factor + (self.end_factor - self.start_factor) * frac)


class LinearWarmup(LinearLR):
    """Warm up linearly from start_factor * lr to lr over `warmup_steps`, then hold."""

    def __init__(self, optimizer: Optimizer, warmup_steps: int, start_factor: float = 0.1) -> None:
        super().__init__(optimizer, start_factor, 1.0, warmup_steps)


class SequentialLR(LRScheduler):
    """One schedule after another: `schedulers[i]` runs from milestone i - 1 (from 0 for
    the first), its own step count starting at 0 there, as PyTorch's SequentialLR. The
    usual transformer schedule is a warmup, then a cosine decay.

    Args:
        schedulers: LRScheduler objects on this optimizer, or their configs
            ({"type": "LinearWarmup", "warmup_steps": 100}), as a job gives them.
        milestones: the steps where each next schedule takes over, increasing, one fewer
            than the schedules.

    Examples:
        >>> SequentialLR(opt, [{"type": "LinearWarmup", "warmup_steps": 100},
        ...                    {"type": "CosineAnnealingLR", "T_max": 900}], [100])
    """

    chainable = False

    def __init__(self, optimizer: Optimizer, schedulers: Sequence[Any],
                 milestones: Sequence[int], last_epoch: int = -1) -> None:
        children = [_child(optimizer, s, i) for i, s in enumerate(schedulers)]
        if len(milestones) != len(children) - 1 or len(children) < 2:
            raise ValueError(f"SequentialLR: needs two or more schedules and one milestone "
                             f"fewer; got {len(children)} and milestones {list(milestones)}")
        if any(b <= a for a, b in zip([0, *milestones], milestones)):
            raise ValueError(f"SequentialLR: milestones must increase from above 0; got "
                             f"{list(milestones)}")
        self.schedulers, self.milestones = children, list(milestones)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, step: int) -> float:
        i = bisect.bisect_right(self.milestones, step)
        start = self.milestones[i - 1] if i else 0
        return self.schedulers[i].lr_at(base_lr, step - start)

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in super().state_dict().items() if k != "schedulers"}
        return {**state, "schedulers": [s.state_dict() for s in self.schedulers]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for child, child_state in zip(self.schedulers, state["schedulers"]):
            child.load_state_dict(child_state)
        super().load_state_dict({k: v for k, v in state.items() if k != "schedulers"})


def _child(optimizer: Optimizer, schedule: Any, i: int) -> LRScheduler:
    """A SequentialLR's i-th schedule, built from its config where one is given."""
    if isinstance(schedule, LRScheduler):
        return schedule
    name = schedule.get("type") if isinstance(schedule, dict) else None
    kinds = chainable()
    if name not in kinds:
        raise ValueError(f"SequentialLR: schedulers[{i}] must be a schedule or a config with "
                         f"'type' one of {list(kinds)}; got {schedule!r}")
    return kinds[name](optimizer, **{k: v for k, v in schedule.items() if k != "type"})


class ReduceLROnPlateau:
    """Multiply lr by `factor` when a metric has stopped improving for `patience` steps.

    Call `step(metrics)` once per evaluation. Same arguments and rule as PyTorch's;
    `min_lr` is one floor for every group, or a list of one per group.
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr: float | list[float] = 0.0,
                 eps: float = 1e-8) -> None:
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ValueError("ReduceLROnPlateau: mode must be 'min' or 'max' and threshold_mode "
                             f"'rel' or 'abs'; got {mode!r}, {threshold_mode!r}")
        if not 0 <= factor < 1:
            raise ValueError(f"ReduceLROnPlateau: factor must be in [0, 1); got {factor}")
        self.optimizer = optimizer
        self.mode, self.factor, self.patience = mode, factor, patience
        self.threshold, self.threshold_mode = threshold, threshold_mode
        groups = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != groups:
                raise ValueError(f"ReduceLROnPlateau: expected {groups} min_lrs, one per "
                                 f"parameter group; got {len(min_lr)}")
            self.min_lrs = [float(v) for v in min_lr]
        else:
            self.min_lrs = [float(min_lr)] * groups
        self.cooldown, self.eps = cooldown, eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0

    def _better(self, value: float) -> bool:
        if self.threshold_mode == "rel":
            scale = 1 - self.threshold if self.mode == "min" else 1 + self.threshold
            bound = self.best * scale
        else:
            bound = self.best - self.threshold if self.mode == "min" else self.best + self.threshold
        return value < bound if self.mode == "min" else value > bound

    def step(self, metrics: float, epoch: int | None = None) -> None:
        """Record one evaluation of the monitored metric (`epoch`: PyTorch's deprecated
        way to set the count)."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        metric = float(metrics)
        if self._better(metric):
            self.best, self.num_bad_epochs = metric, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, floor in zip(self.optimizer.param_groups, self.min_lrs):
                new = max(group["lr"] * self.factor, floor)
                if group["lr"] - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0

    def get_last_lr(self) -> list[float]:
        """The learning rate of each group now."""
        return [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The best value, counters and settings, for checkpoints."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a `state_dict`."""
        self.__dict__.update(state)
