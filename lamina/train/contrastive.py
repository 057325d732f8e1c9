"""Contrastive divergence (`cd`): CD-k and persistent CD for energy models (RBMs)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.train.algorithm import Algorithm, register_algorithm
from lamina.train.updater import push_gradients


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
