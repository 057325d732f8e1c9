"""Training algorithms: one `train_one_batch` each, picked by name in the job config.

An algorithm sees the model, a batch and the updater; it never touches an optimizer, so
the same class runs locally and against a parameter server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.parallel import bounds
from lamina.registry import Registry
from lamina.train.losses import get_loss, get_metric
from lamina.train.updater import push_gradients

_ALGORITHMS = Registry("algorithm")


def register_algorithm(name: str) -> Callable[[type[Algorithm]], type[Algorithm]]:
    """Register an Algorithm subclass under a name; its __init__ keywords are config fields.

    Examples:
        >>> @train.register_algorithm("bp_twice")
        ... class Twice(train.BP):
        ...     def train_one_batch(self, model, batch, updater):
        ...         super().train_one_batch(model, batch, updater)
        ...         return super().train_one_batch(model, batch, updater)
    """
    def decorate(cls: type[Algorithm]) -> type[Algorithm]:
        if not (isinstance(cls, type) and issubclass(cls, Algorithm)):
            raise TypeError(f"register_algorithm({name!r}): {cls!r} is not an Algorithm")
        _ALGORITHMS.add(name, cls)
        return cls

    return decorate


def algorithm_class(name: str) -> type[Algorithm]:
    """The Algorithm class registered under `name`."""
    return _ALGORITHMS.lookup(name)


def algorithm_from_config(section: Mapping[str, Any]) -> Algorithm:
    """An algorithm from a job's algorithm section: `{"type": "bptt", "bptt_steps": 32}`."""
    options = {k: v for k, v in section.items() if k != "type"}
    return algorithm_class(section["type"])(**options)


def algorithm_names() -> list[str]:
    """The registered algorithm names, sorted."""
    return _ALGORITHMS.names()


class Algorithm:
    """Base class. The Trainer sets `loss` and `metrics` before training starts."""

    loss: Callable[[Tensor, Any], Tensor] = staticmethod(get_loss("cross_entropy"))
    metrics: dict[str, Callable[[Tensor, Tensor], float]] = {}
    compiled = False  # run steps through lamina.plan (bp and bptt)
    # One updater step per batch, which ends it: a distributed worker restarted after that
    # step goes on from the next batch with the state it had then, exactly. BPTT steps
    # once per chunk; a worker restarted inside a batch redoes the batch.
    one_step_per_batch = True

    def use_plan(self, on: bool | dict[str, Any]) -> None:
        """Run this algorithm's steps as compiled execution plans (True, or a dict of
        `lamina.plan.compile`'s options)."""
        if _wants_plan(on):
            raise ValueError(f"{type(self).__name__}: compiled execution plans are available "
                             "for the bp and bptt algorithms only; set trainer.compile: false")

    def bind(self, loss: Any, metrics: list[str]) -> Algorithm:
        """Set the loss (a name or callable) and the metric names; called by the Trainer."""
        self.loss = get_loss(loss)
        self.metrics = {m: get_metric(m) for m in metrics}
        return self

    def reports(self, train: bool) -> list[str] | None:
        """The metric names train_one_batch (or test_one_batch) returns, once bound; None
        when unknown until it runs. A class that defines this lets a job refuse a watched
        metric it will never report (a typo) before training starts."""
        return None

    def train_one_batch(self, model: Layer, batch: tuple[Tensor, ...], updater: Any
                        ) -> dict[str, float]:
        """Learn from one batch through the updater (pull, push gradients, step); return
        the batch's metrics."""
        raise NotImplementedError

    def test_one_batch(self, model: Layer, batch: tuple[Tensor, ...]) -> dict[str, float]:
        """Measure the model on one batch, learning nothing; return the metrics."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint must keep to resume this algorithm exactly (arrays allowed)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` returned."""

    def _scores(self, output: Tensor, target: Tensor, loss: Tensor) -> dict[str, float]:
        logs = {"loss": loss.item()}
        logs.update({name: fn(output, target) for name, fn in self.metrics.items()})
        return logs


def _loss_and_metrics(self: Algorithm, train: bool) -> list[str]:
    """The loss and the bound metrics (what `_scores` returns), in training and test."""
    return ["loss", *self.metrics]


class _Planned(Algorithm):
    """An algorithm whose steps may run as execution plans, one per model and mode."""

    def use_plan(self, on: bool | dict[str, Any]) -> None:
        self.compiled = _wants_plan(on)
        self.plan_options = dict(on) if isinstance(on, dict) else {}
        self.plans: dict[int, Any] = {}

    def _plan(self, model: Layer, train: bool) -> Any:
        from lamina.plan import compile

        key = id(model) * 2 + train
        if key not in self.plans:
            self.plans[key] = compile(model, self._plan_loss() if train else None,
                                      **self.plan_options)
        return self.plans[key]

    def _plan_loss(self) -> Callable[[Tensor, Any], Tensor]:
        return self.loss


def _push_grads(model: Layer, updater: Any) -> None:
    """Push every gradient in .grad once backward has finished (a plan's, or the slices'
    summed), rather than streaming them as eager backward makes them."""
    for name, p in model.named_parameters():
        if p.grad is not None:
            updater.push(name, p.grad.array)


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


def _energy_model(model: Any) -> Any:
    missing = [m for m in ("free_energy", "gibbs", "reconstruction_error",
                           "pseudo_log_likelihood") if not callable(getattr(model, m, None))]
    if missing:
        raise ValueError(f"cd: the model must be an energy model with {missing} (an RBM); "
                         f"got {type(model).__name__}")
    return model


def _visible(batch: tuple[Tensor, ...]) -> Any:
    """The batch's first tensor as visible units: an array, one row a sample."""
    x = batch[0].array
    return x.reshape(x.shape[0], -1)


@register_algorithm("cd")
class CD(Algorithm):
    """Contrastive divergence CD-k (Hinton, 2002), or persistent CD (Tieleman, 2008).

    The negative phase runs k Gibbs steps from the data (CD) or from chains kept across
    batches (PCD). The gradient pushed is that of mean F(v_data) - mean F(v_model), F the
    free energy; it equals the classic <vh>_model - <vh>_data statistics.
    Reports the free-energy gap as `loss`, the reconstruction error and the
    pseudo-log-likelihood.
    """

    def __init__(self, k: int = 1, persistent: bool = False) -> None:
        if k < 1:
            raise ValueError(f"cd: k must be >= 1; got {k}")
        self.k, self.persistent = k, persistent
        self.chain: np.ndarray | None = None

    def bind(self, loss: Any, metrics: list[str]) -> Algorithm:
        self.metrics = {}  # CD reports its own measures; labels, if any, are unused
        return self

    def reports(self, train: bool) -> list[str]:
        return ["loss", "recon_error", "pseudo_ll"] if train else ["recon_error", "pseudo_ll"]

    def train_one_batch(self, model: Layer, batch: tuple[Tensor, ...], updater: Any
                        ) -> dict[str, float]:
        rbm = _energy_model(model)
        v0 = _visible(batch)
        updater.pull()
        start = None
        if self.persistent and self.chain is not None and self.chain.shape == v0.shape:
            start = self.chain
        if callable(getattr(rbm, "contrastive_divergence", None)):  # all of it in arrays
            grads, vk, logs = rbm.contrastive_divergence(v0, self.k, start)
            for name, grad in grads.items():
                updater.push(name, grad)
        else:  # any energy model: differentiate its free energies
            vk = rbm.gibbs(v0 if start is None else start, self.k)
            loss = (rbm.free_energy(Tensor(v0)).mean()
                    - rbm.free_energy(Tensor(vk)).mean())
            push_gradients(loss, model, updater)
            logs = {"loss": loss.item(), **self._measures(rbm, v0)}
        if self.persistent:
            self.chain = vk
        updater.step()
        return logs

    def test_one_batch(self, model: Layer, batch: tuple[Tensor, ...]) -> dict[str, float]:
        return self._measures(_energy_model(model), _visible(batch))

    def _measures(self, rbm: Any, v0: Any) -> dict[str, float]:
        with no_grad():
            return {"recon_error": rbm.reconstruction_error(v0),
                    "pseudo_ll": rbm.pseudo_log_likelihood(v0)}

    def state_dict(self) -> dict[str, Any]:
        return {"chain": self.chain} if self.chain is not None else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        chain = state.get("chain")
        self.chain = None if chain is None else np.array(chain)


def _wants_plan(on: bool | dict[str, Any]) -> bool:
    """trainer.compile asks for plans: True, or a dict of lamina.plan.compile's options."""
    return on is True or isinstance(on, dict)
