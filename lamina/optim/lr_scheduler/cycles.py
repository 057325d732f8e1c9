"""Schedules that rise and fall: one cycle (Smith & Topin, 2018), cyclical rates (Smith,
2017), and cosine annealing with warm restarts (Loshchilov & Hutter, 2017). The first
two cycle the momentum (or Adam's beta1) against the rate, as PyTorch's do."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from lamina.optim.lr_scheduler.base import LRScheduler
from lamina.optim.optimizer import Optimizer


def _per_group(value: Any, optimizer: Optimizer, name: str) -> list[float]:
    groups = len(optimizer.param_groups)
    values = list(value) if isinstance(value, (list, tuple)) else [value] * groups
    if len(values) != groups:
        raise ValueError(f"expected {groups} values for {name}, one per group; got "
                         f"{len(values)}")
    return [float(v) for v in values]


def _momentum_key(optimizer: Optimizer, name: str) -> str:
    if "momentum" in optimizer.defaults:
        return "momentum"
    if "betas" in optimizer.defaults:
        return "betas"
    raise ValueError(f"{name}: optimizer must support momentum or beta1 with "
                     "`cycle_momentum` option enabled")


def _set_momentum(group: dict[str, Any], key: str, value: float) -> None:
    group[key] = (value, *group["betas"][1:]) if key == "betas" else value


def _record_momenta(optimizer: Optimizer, momenta: list[Any]) -> None:
    """Each group's momentum range in the group too, as PyTorch's cycles keep it there:
    the optimizer's state dict then holds the same keys as PyTorch's."""
    for group, (base, top) in zip(optimizer.param_groups, momenta):
        group["base_momentum"], group["max_momentum"] = base, top


class OneCycleLR(LRScheduler):
    """One cycle over `total_steps`: the rate rises from max_lr / div_factor to max_lr over
    the first `pct_start` of the steps, then anneals to that / final_div_factor (with
    `three_phase`, back down symmetrically first); momentum moves the other way between
    max_momentum and base_momentum. Step once per batch.

    Examples:
        >>> OneCycleLR(opt, max_lr=0.1, total_steps=1000)
    """

    def __init__(self, optimizer: Optimizer, max_lr: float | list[float],
                 total_steps: int | None = None, epochs: int | None = None,
                 steps_per_epoch: int | None = None, pct_start: float = 0.3,
                 anneal_strategy: str = "cos", cycle_momentum: bool = True,
                 base_momentum: float = 0.85, max_momentum: float = 0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        if total_steps is None:
            if not epochs or not steps_per_epoch:
                raise ValueError("OneCycleLR: you must define either total_steps OR (epochs "
                                 "AND steps_per_epoch)")
            total_steps = epochs * steps_per_epoch
        if total_steps < 1 or not 0 <= pct_start <= 1 or anneal_strategy not in ("cos",
                                                                                  "linear"):
            raise ValueError(f"OneCycleLR: expected total_steps >= 1, pct_start in [0, 1] and "
                             f"anneal_strategy 'cos' or 'linear'; got {total_steps}, "
                             f"{pct_start}, {anneal_strategy!r}")
        self.total_steps, self.anneal_strategy = total_steps, anneal_strategy
        self.cycle_momentum = cycle_momentum
        self.div_factor, self.final_div_factor = div_factor, final_div_factor
        up = float(pct_start * total_steps) - 1
        # (end step, lr from, lr to, momentum from, momentum to), as multiples of the initial lr
        self.phases = ([[up, 1.0, div_factor, 1, 0], [2 * up, div_factor, 1.0, 0, 1],
                        [total_steps - 1, 1.0, 1 / final_div_factor, 1, 1]] if three_phase else
                       [[up, 1.0, div_factor, 1, 0],
                        [total_steps - 1, div_factor, 1 / final_div_factor, 0, 1]])
        self.momenta: list[list[float]] = []
        if cycle_momentum:
            self._key = _momentum_key(optimizer, "OneCycleLR")
            self.momenta = [[b, m] for b, m in zip(
                _per_group(base_momentum, optimizer, "base_momentum"),
                _per_group(max_momentum, optimizer, "max_momentum"))]
        if last_epoch == -1:
            _record_momenta(optimizer, self.momenta)
            for group, top in zip(optimizer.param_groups,
                                  _per_group(max_lr, optimizer, "max_lr")):
                group["initial_lr"] = top / div_factor
                group["max_lr"], group["min_lr"] = top, top / div_factor / final_div_factor
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _position(self) -> tuple[list[Any], float]:
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        start = 0.0
        for i, phase in enumerate(self.phases):
            if step <= phase[0] or i == len(self.phases) - 1:
                return phase, (step - start) / (phase[0] - start)
            start = phase[0]
        raise AssertionError("unreachable")

    def lr_at(self, base_lr: float, step: int) -> float:
        phase, pct = self._position()
        return self._anneal(base_lr * phase[1], base_lr * phase[2], pct)

    def _apply(self) -> None:
        super()._apply()
        if self.cycle_momentum:
            phase, pct = self._position()
            for group, levels in zip(self.optimizer.param_groups, self.momenta):
                _set_momentum(group, self._key,
                              self._anneal(levels[phase[3]], levels[phase[4]], pct))


class CyclicLR(LRScheduler):
    """The rate cycles between base_lr and max_lr, `step_size_up` steps up and
    `step_size_down` (default the same) down; "triangular2" halves the height each cycle,
    "exp_range" scales it by gamma ** step, or `scale_fn` by cycle or step. Momentum
    cycles the other way. Step once per batch.

    Examples:
        >>> CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=200)
    """

    def __init__(self, optimizer: Optimizer, base_lr: float | list[float],
                 max_lr: float | list[float], step_size_up: int = 2000,
                 step_size_down: int | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn: Callable[[float], float] | None = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True,
                 base_momentum: float = 0.8, max_momentum: float = 0.9,
                 last_epoch: int = -1) -> None:
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"CyclicLR: mode must be 'triangular', 'triangular2' or "
                             f"'exp_range' (or give scale_fn); got {mode!r}")
        bases = _per_group(base_lr, optimizer, "base_lr")
        self.max_lrs = _per_group(max_lr, optimizer, "max_lr")
        down = step_size_down if step_size_down is not None else step_size_up
        self.total_size = float(step_size_up + down)
        self.step_ratio = step_size_up / self.total_size
        self.mode, self.gamma, self.scale_fn_custom = mode, gamma, scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        self.momenta: list[tuple[float, float]] = []
        if cycle_momentum:
            self._key = _momentum_key(optimizer, "CyclicLR")
            self.momenta = list(zip(_per_group(base_momentum, optimizer, "base_momentum"),
                                    _per_group(max_momentum, optimizer, "max_momentum")))
        if last_epoch == -1:
            _record_momenta(optimizer, self.momenta)
            for group, base in zip(optimizer.param_groups, bases):
                group["initial_lr"] = group["lr"] = base
        super().__init__(optimizer, last_epoch)

    def _scale(self, x: float) -> float:
        if self.scale_fn_custom is not None:
            return self.scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def _height(self) -> tuple[float, float]:
        """(the fraction of the way up, the cycle's scale) at the current step."""
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        up = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        return up, self._scale(cycle if self.scale_mode == "cycle" else self.last_epoch)

    def get_lr(self) -> list[float]:
        up, scale = self._height()
        return [base + (top - base) * up * scale for base, top in zip(self.base_lrs,
                                                                         self.max_lrs)]

    def _apply(self) -> None:
        super()._apply()
        if self.cycle_momentum:
            up, scale = self._height()
            for group, (low, high) in zip(self.optimizer.param_groups, self.momenta):
                _set_momentum(group, self._key, high - (high - low) * up * scale)

    def state_dict(self) -> dict[str, Any]:
        return {k: v for k, v in super().state_dict().items() if k != "scale_fn_custom"}


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from the initial lr to eta_min over T_0 steps, then again over
    T_0 * T_mult, T_0 * T_mult^2, ... (restarts at the top each time).

    Examples:
        >>> CosineAnnealingWarmRestarts(opt, T_0=10, T_mult=2)
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1, eta_min: float = 0.0,
                 last_epoch: int = -1) -> None:
        if T_0 < 1 or T_mult < 1 or int(T_mult) != T_mult:
            raise ValueError(f"CosineAnnealingWarmRestarts: expected integers T_0 >= 1 and "
                             f"T_mult >= 1; got {T_0} and {T_mult}")
        self.T_0, self.T_mult, self.eta_min = T_0, T_mult, eta_min
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, step: float) -> float:
        if step < self.T_0:
            t_cur, t_i = step, self.T_0
        elif self.T_mult == 1:
            t_cur, t_i = step % self.T_0, self.T_0
        else:
            n = int(math.log(step / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            t_cur = step - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            t_i = self.T_0 * self.T_mult**n
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * t_cur / t_i)) / 2
