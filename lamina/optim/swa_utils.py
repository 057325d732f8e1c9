"""`lamina.optim.swa_utils`, PyTorch's: stochastic weight averaging and exponential moving
averages of a model's weights (AveragedModel), the SWA learning-rate schedule (SWALR),
and update_bn, which recomputes batch-norm statistics for the averaged weights.

    >>> from lamina.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
    >>> ema = AveragedModel(nn.Linear(2, 1), multi_avg_fn=get_ema_multi_avg_fn(0.99))
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.normalization import _BatchNorm
from lamina.optim.lr_scheduler.base import LRScheduler
from lamina.optim.optimizer import Optimizer


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[..., None]:
    """An update of a list of averages, each moved toward its current value by 1 - decay.

    Examples:
        >>> avg, new = [lm.zeros(1)], [lm.ones(1)]
        >>> lm.optim.swa_utils.get_ema_multi_avg_fn(0.5)(avg, new, None); avg[0]
        tensor([0.5000])
    """
    def ema_update(averaged: list[Tensor], current: list[Tensor], num_averaged: Any) -> None:
        for a, c in zip(averaged, current):
            if a.dtype.kind == "f":
                a.array += (c.array - a.array) * (1 - decay)
    return ema_update


def get_swa_multi_avg_fn() -> Callable[..., None]:
    """An update of a list of averages to the mean of every value seen: avg + (current -
    avg) / (n + 1).

    Examples:
        >>> avg = [lm.zeros(1)]
        >>> lm.optim.swa_utils.get_swa_multi_avg_fn()(avg, [lm.ones(1)], lm.tensor(1)); avg[0]
        tensor([0.5000])
    """
    def swa_update(averaged: list[Tensor], current: list[Tensor], num_averaged: Any) -> None:
        n = float(num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged)
        for a, c in zip(averaged, current):
            if a.dtype.kind == "f":
                a.array += (c.array - a.array) / (n + 1)
    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """One average's EMA update, decay * avg + (1 - decay) * current, returned.

    Examples:
        >>> lm.optim.swa_utils.get_ema_avg_fn(0.5)(lm.zeros(1), lm.ones(1), None)
        tensor([0.5000])
    """
    def ema_update(averaged: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        return decay * averaged + (1 - decay) * current
    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """One average's SWA update, avg + (current - avg) / (n + 1), returned.

    Examples:
        >>> lm.optim.swa_utils.get_swa_avg_fn()(lm.zeros(1), lm.ones(1), lm.tensor(1))
        tensor([0.5000])
    """
    def swa_update(averaged: Tensor, current: Tensor, num_averaged: Any) -> Tensor:
        return averaged + (current - averaged) / (num_averaged + 1)
    return swa_update


class AveragedModel(Layer):
    """A copy of `model` whose weights are an average of model's over the calls to
    `update_parameters`: the running mean (SWA) by default, or what `avg_fn` (one tensor)
    or `multi_avg_fn` (lists of them) computes, such as an EMA. Buffers follow the model's
    unless `use_buffers`, which averages them too. Forward runs the averaged copy.

    Examples:
        >>> swa = lm.optim.swa_utils.AveragedModel(nn.Linear(2, 1))
        >>> swa.update_parameters(nn.Linear(2, 1)); swa.n_averaged
        tensor(1)
    """

    def __init__(self, model: Layer, device: Any = None, avg_fn: Any = None,
                 multi_avg_fn: Any = None, use_buffers: bool = False) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel: give avg_fn or multi_avg_fn, not both")
        self.module = copy.deepcopy(model)
        self.register_buffer("n_averaged", np.zeros((), np.int64))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def _tensors(self, model: Layer) -> list[Tensor]:
        return [*model.parameters(), *model.buffers()] if self.use_buffers \
            else list(model.parameters())

    def update_parameters(self, model: Layer) -> None:
        """Fold model's current weights into the average (a copy of them at the first)."""
        ours, theirs = self._tensors(self.module), self._tensors(model)
        n = int(self.n_averaged.item())
        with no_grad():
            if n == 0:
                for a, c in zip(ours, theirs):
                    a.array[...] = c.array
            elif self.avg_fn is not None:
                for a, c in zip(ours, theirs):
                    a.array[...] = self.avg_fn(a.detach(), c.detach(), self.n_averaged).array
            else:
                (self.multi_avg_fn or get_swa_multi_avg_fn())(
                    [a.detach() for a in ours], [c.detach() for c in theirs], self.n_averaged)
            if not self.use_buffers:
                for a, c in zip(self.module.buffers(), model.buffers()):
                    a.array[...] = c.array
        self.n_averaged.array[...] = n + 1


@no_grad()
def update_bn(loader: Iterable[Any], model: Layer, device: Any = None) -> None:
    """Recompute every batch norm's running statistics over one pass of `loader` (the
    first element of each batch the input), as a cumulative average; the model's mode and
    the momenta are restored.

    Examples:
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
        >>> lm.optim.swa_utils.update_bn([lm.randn(8, 2)], net); net[1].num_batches_tracked
        tensor(1)
    """
    momenta = {}
    for layer in model.modules():
        if isinstance(layer, _BatchNorm):
            layer.reset_running_stats()
            momenta[layer] = layer.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for layer in momenta:
        layer.momentum = None
    for batch in loader:
        model(batch[0] if isinstance(batch, (list, tuple)) else batch)
    for layer, momentum in momenta.items():
        layer.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from its current value to `swa_lr` over `anneal_epochs`
    steps, along a cosine ("cos") or a line ("linear"), then holds it, as PyTorch's.

    Examples:
        >>> opt = lm.optim.SGD(nn.Linear(2, 1).parameters(), lr=1.0)
        >>> s = lm.optim.swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=2,
        ...                              anneal_strategy="linear")
        >>> s.step(); s.step(); s.get_last_lr()
        [0.1]
    """

    def __init__(self, optimizer: Optimizer, swa_lr: Any, anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        groups = optimizer.param_groups
        lrs = list(swa_lr) if isinstance(swa_lr, (list, tuple)) else [swa_lr] * len(groups)
        if len(lrs) != len(groups):
            raise ValueError(f"SWALR: expected {len(groups)} values for swa_lr, got "
                             f"{len(lrs)}")
        for lr, group in zip(lrs, groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"SWALR: anneal_strategy must be 'cos' or 'linear'; got "
                             f"{anneal_strategy!r}")
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, int) \
                or anneal_epochs < 0:
            raise ValueError(f"SWALR: anneal_epochs must be an int >= 0; got {anneal_epochs!r}")
        self.anneal_strategy, self.anneal_epochs = anneal_strategy, anneal_epochs
        super().__init__(optimizer, last_epoch)

    def _anneal(self, t: float) -> float:
        return t if self.anneal_strategy == "linear" else (1 - math.cos(math.pi * t)) / 2

    def get_lr(self) -> list[float]:
        # From the current lr, as PyTorch's: recover the lr before the previous step's
        # blend, then blend by this step's weight
        step = max(1, self.last_epoch) if self.anneal_epochs == 0 else self.last_epoch
        span = max(1, self.anneal_epochs)
        before = self._anneal(max(0.0, min(1.0, (step - 1) / span)))
        now = self._anneal(max(0.0, min(1.0, step / span)))
        out = []
        for group in self.optimizer.param_groups:
            swa, lr = group["swa_lr"], group["lr"]
            start = swa if before == 1 else (lr - before * swa) / (1 - before)
            out.append(swa * now + start * (1 - now))
        return out


__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn",
           "get_swa_avg_fn", "get_swa_multi_avg_fn", "update_bn"]
