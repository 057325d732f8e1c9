"""Truncated back-propagation through time (`bptt`): sequences cut into chunks, an update
after each, the recurrent state carried across them but detached."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.train.algorithm import _loss_and_metrics, _Planned, _push_grads, register_algorithm
from lamina.train.updater import push_gradients


def _stateful_layers(model: Layer) -> list[Any]:
    return [layer for _, layer in model.named_layers()
            if callable(getattr(layer, "detach_state", None))]


@register_algorithm("bptt")
class BPTT(_Planned):
    """Truncated back-propagation through time (Williams & Peng, 1990).

    Each batch holds sequences (B, T, ...) with per-step targets (B, T). They are cut into
    chunks of `bptt_steps`; after each chunk the parameters are updated and the recurrent
    state is carried into the next chunk but detached, so gradients span one chunk.
    The model's recurrent layers must be stateful (`stateful: true`); their state is reset
    at the start of every batch. Compiled (`Trainer(compile=True)`), each chunk replays an
    execution plan that takes the carried state as an input and hands back the new one
    (programs for the first chunk, the later ones, and a shorter last one).
    """

    reports = _loss_and_metrics
    one_step_per_batch = False

    def __init__(self, bptt_steps: int = 35) -> None:
        if bptt_steps < 1:
            raise ValueError(f"bptt: bptt_steps must be >= 1; got {bptt_steps}")
        self.bptt_steps = bptt_steps

    def _layers(self, model: Layer) -> list[Any]:
        layers = _stateful_layers(model)
        if not any(getattr(layer, "stateful", False) for layer in layers):
            raise ValueError("bptt: the model has no stateful recurrent layer; set "
                             "`stateful: true` on its RNN/LSTM/GRU so state crosses chunks")
        return layers

    def _chunks(self, batch: tuple[Tensor, ...]):
        x, y = batch[0], batch[1]
        for t0 in range(0, x.shape[1], self.bptt_steps):
            yield x[:, t0:t0 + self.bptt_steps].detach(), y[:, t0:t0 + self.bptt_steps].detach()

    def _flat(self, output: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
        return output.reshape(-1, output.shape[-1]), y.reshape(-1)

    def _plan_loss(self) -> Callable[[Tensor, Any], Tensor]:
        return lambda output, target: self.loss(*self._flat(output, target))

    def train_one_batch(self, model: Layer, batch: tuple[Tensor, ...], updater: Any
                        ) -> dict[str, float]:
        layers = self._layers(model)
        for layer in layers:
            layer.reset_state()
        totals: dict[str, float] = {}
        count = 0
        for xc, yc in self._chunks(batch):
            updater.pull()
            if self.compiled:
                plan = self._plan(model, train=True)
                loss = plan(xc, yc)
                _push_grads(model, updater)
                output, target = self._flat(plan.output, yc)
            else:
                output, target = self._flat(model(xc), yc)
                loss = self.loss(output, target)
                push_gradients(loss, model, updater)
            updater.step()
            for layer in layers:
                layer.detach_state()
            n = target.numel()
            for k, v in self._scores(output, target, loss).items():
                totals[k] = totals.get(k, 0.0) + v * n
            count += n
        return {k: v / count for k, v in totals.items()}

    def test_one_batch(self, model: Layer, batch: tuple[Tensor, ...]) -> dict[str, float]:
        for layer in self._layers(model):
            layer.reset_state()
        output, target = self._flat(model(batch[0]), batch[1])
        return self._scores(output, target, self.loss(output, target))
