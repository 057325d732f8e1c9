"""Back-propagation (`bp`): forward, loss, backward, one update a batch; optionally over
micro-batches whose gradients add up to the batch's."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.parallel import bounds
from lamina.train.algorithm import (
    Algorithm,
    _loss_and_metrics,
    _Planned,
    _push_grads,
    register_algorithm,
)
from lamina.train.updater import push_gradients


@register_algorithm("bp")
class BP(_Planned):
    """Back-propagation: forward, loss, backward (pushing gradients as they finish), step.

    Compiled (`Trainer(compile=True)`), each step replays an execution plan traced once per
    batch shape instead of recording a graph.

    Args:
        micro_batches: cut each batch along axis 0 into this many slices (as equal as they
            can be) and run forward and backward on one slice at a time, summing the
            gradients, before one update: the batch's step with the activation memory of
            a slice (gradient accumulation). Each slice's gradient is weighted by its share
            of the rows if the loss is a mean, by 1 if a sum; which one is found on the
            first slice, and every batch checks that the whole batch's loss, computed from
            the slices' outputs, is that weighted sum, refusing the update otherwise (a
            mean that counts rows unequally: class weights, ignored labels). Batch norm
            normalises each slice by its own statistics, as with a smaller batch.
    """

    reports = _loss_and_metrics
    # Class defaults too: a subclass with its own __init__ need not call this one.
    micro_batches = 1
    reduction: str | None = None

    def __init__(self, micro_batches: int = 1) -> None:
        if not isinstance(micro_batches, int) or micro_batches < 1:
            raise ValueError(f"bp: micro_batches must be an int >= 1; got {micro_batches!r}")
        self.micro_batches = micro_batches
        self.reduction: str | None = None  # "mean" or "sum": how the loss combines rows

    def train_one_batch(self, model: Layer, batch: tuple[Tensor, ...], updater: Any
                        ) -> dict[str, float]:
        x, y = batch[0], batch[1]
        updater.pull()
        if self.micro_batches > 1 and len(x) > 1:
            return self._train_in_slices(model, x, y, updater)
        if self.compiled:
            plan = self._plan(model, train=True)
            loss = plan(x, y)
            _push_grads(model, updater)
            updater.step()
            return self._scores(plan.output, y, loss)
        output = model(x)
        loss = self.loss(output, y)
        push_gradients(loss, model, updater)
        updater.step()
        return self._scores(output, y, loss)

    def bind(self, loss: Any, metrics: list[str]) -> Algorithm:
        self.reduction = None  # found again for the new loss
        return super().bind(loss, metrics)

    def _train_in_slices(self, model: Layer, x: Tensor, y: Tensor, updater: Any
                         ) -> dict[str, float]:
        """One update from the batch's slices: each slice's forward and backward in turn,
        its gradients weighted and added to the sum so far in the parameters' .grad."""
        params = [p for p in model.parameters() if p.requires_grad]
        outputs, combined = [], 0.0
        for lo, hi in bounds(len(x), self.micro_batches):
            output, loss, weight = self._slice(model, params, _rows(x, lo, hi),
                                               _rows(y, lo, hi), (hi - lo) / len(x))
            outputs.append(output.array)
            combined += weight * loss.item()
        output = Tensor(np.concatenate(outputs))
        with no_grad():
            whole = self.loss(output, y)
        self._check_combined(whole.item(), combined, params)
        _push_grads(model, updater)
        updater.step()
        return self._scores(output, y, whole)

    def _slice(self, model: Layer, params: list[Any], x: Tensor, y: Tensor, share: float
               ) -> tuple[Tensor, Tensor, float]:
        """Forward and backward on one slice, its gradients added in with its weight."""
        if self.reduction is not None:
            weight = self._weight(share)
            return (*self._forward_backward(model, x, y, weight), weight)
        # The weight depends on how the loss reduces, found from this slice's output: its
        # gradients are made unweighted, then weighted and added to the earlier slices'.
        so_far = [p.grad for p in params]
        for p in params:
            p.grad = None
        output, loss = self._forward_backward(model, x, y, 1.0)
        self.reduction = self._reduction(output, y)
        weight = self._weight(share)
        _add_weighted(params, so_far, weight)
        return output, loss, weight

    def _forward_backward(self, model: Layer, x: Tensor, y: Tensor, weight: float
                          ) -> tuple[Tensor, Tensor]:
        """The slice's output and loss; its gradients, of weight * loss, added to .grad."""
        if self.compiled:
            plan = self._plan(model, train=True)
            loss = plan(x, y, grad_scale=weight)
            return self._one_output(plan.output), loss
        output = self._one_output(model(x))
        loss = self.loss(output, y)
        loss.backward(np.asarray(weight, loss.dtype))
        return output, loss

    def _one_output(self, output: Any) -> Tensor:
        """The output, which must be one tensor: the slices' outputs are joined."""
        if not isinstance(output, Tensor):
            raise TypeError(f"bp: micro_batches={self.micro_batches} needs a model with one "
                            f"output tensor; got {type(output).__name__}")
        return output

    def _weight(self, share: float) -> float:
        """A slice's weight in the batch's loss: its share of the rows for a mean (or while
        unknown), 1 for a sum."""
        return 1.0 if self.reduction == "sum" else share

    def _reduction(self, output: Tensor, y: Tensor) -> str | None:
        """How the loss combines rows, found once, from the loss of a slice's output against
        the same output twice over: a mean gives the same value, a sum twice it; None while
        a loss of 0 leaves it open."""
        out = output.array
        labels = y.array if isinstance(y, Tensor) else np.asarray(y)
        with no_grad():
            once = self.loss(Tensor(out), Tensor(labels)).item()
            twice = self.loss(Tensor(np.concatenate([out, out])),
                              Tensor(np.concatenate([labels, labels]))).item()
        for reduction, factor in (("mean", 1.0), ("sum", 2.0)):
            if np.isclose(twice, factor * once, rtol=1e-4, atol=1e-7):
                return None if np.isclose(once, 0.0, atol=1e-7) else reduction  # 0: unknown
        raise ValueError(f"bp: micro_batches={self.micro_batches} needs a loss that is a "
                         f"mean or a sum over rows; on one slice it gives {once:.6g}, on that "
                         f"slice twice over {twice:.6g}. Set micro_batches: 1")

    def _check_combined(self, whole: float, combined: float, params: list[Any]) -> None:
        """Refuse the update (clearing the gradients) if the slices' weighted losses do not
        add up to the batch's: their gradients would not add up to the batch's either."""
        if np.isclose(whole, combined, rtol=1e-4, atol=1e-6 * max(1.0, abs(whole))):
            return
        for p in params:
            p.grad = None
        raise ValueError(
            f"bp: micro_batches={self.micro_batches}: the batch's loss is {whole:.6g}, but "
            f"its slices' losses weighted as a {self.reduction or 'mean'} over rows give "
            f"{combined:.6g}, so their gradients would not be the batch's. The loss counts "
            "rows unequally (class weights, ignored labels); use reduction: sum (and scale "
            "the learning rate), or micro_batches: 1")

    def test_one_batch(self, model: Layer, batch: tuple[Tensor, ...]) -> dict[str, float]:
        x, y = batch[0], batch[1]
        output = self._plan(model, train=False)(x) if self.compiled else model(x)
        return self._scores(output, y, self.loss(output, y))


def _rows(t: Any, lo: int, hi: int) -> Any:
    """Rows lo:hi of a batch tensor, as a new leaf (no op recorded)."""
    return Tensor(t.array[lo:hi]) if isinstance(t, Tensor) else t[lo:hi]


def _add_weighted(params: list[Any], so_far: list[Any], weight: float) -> None:
    """p.grad = so_far + weight * p.grad for each parameter; a leaf owns its .grad, so in
    place."""
    for p, before in zip(params, so_far):
        if p.grad is None:
            p.grad = before
            continue
        g = p.grad.array
        if weight != 1.0:
            g *= g.dtype.type(weight)
        if before is not None:
            g += before.array
