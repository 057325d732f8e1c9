"""Restricted Boltzmann machine with Bernoulli visible and hidden units, as an energy model.

The energy model interface, used by the CD algorithm through duck typing:
`free_energy(v)`, `sample_hidden(v)`, `sample_visible(h)`, `gibbs(v, k)`,
`statistics(v)`, `reconstruction_error(v)`, `pseudo_log_likelihood(v)`; optionally
`contrastive_divergence(v, k, start)`, the whole CD-k estimate in arrays, which CD then
uses instead of differentiating free energies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina.functions as F
from lamina import fused, state
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.activation import sigmoid_array, softplus_array
from lamina.nn import init
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer

# The compiled CD step's products run in its kernels' loops, on one thread: they save
# NumPy's calls, which cost more than a small batch's products, but from about this many
# multiply-adds a product (batch x visible x hidden) BLAS's threads outrun them.
COMPILED_UP_TO = 1 << 22


@register_layer("RBM")
class RBM(Layer):
    """E(v, h) = -v.b - h.c - h W v, with W (n_hidden, n_visible), b visible, c hidden bias.

    As a layer, forward(v) returns p(h = 1 | v), so a trained RBM serves as a feature
    extractor inside a Sequential. Weights start from N(0, 0.01^2), biases at 0
    (Hinton, "A practical guide to training RBMs", 2010).

    Examples:
        >>> rbm = nn.RBM(64, 32)
        >>> vk = rbm.gibbs(v0, k=1)                       # arrays, no graph
        >>> loss = rbm.free_energy(v0).mean() - rbm.free_energy(lm.tensor(vk)).mean()
        >>> loss.backward()                               # the CD-k gradient
    """

    def __init__(self, n_visible: int, n_hidden: int) -> None:
        super().__init__()
        self.n_visible, self.n_hidden = n_visible, n_hidden
        self.weight = Parameter(np.empty((n_hidden, n_visible), np.float32))
        self.visible_bias = Parameter(np.zeros(n_visible, np.float32))
        self.hidden_bias = Parameter(np.zeros(n_hidden, np.float32))
        init.normal_(self.weight, 0.0, 0.01)

    def _fits(self, v: Any, *rest: Any) -> str | None:
        shape = getattr(v, "shape", ())
        return f"n_visible={shape[1]}" if len(shape) == 2 and shape[1] != self.n_visible else None

    def _check(self, v: Any) -> None:
        if v.ndim != 2 or v.shape[1] != self.n_visible:
            raise ShapeError(f"RBM: expected visible units (N, {self.n_visible}); got "
                             f"{tuple(v.shape)}")

    def forward(self, v: Tensor) -> Tensor:
        self._check(v)
        return F.sigmoid(F.linear(v, self.weight, self.hidden_bias))

    def free_energy(self, v: Tensor) -> Tensor:
        """F(v) = -v.b - sum_j softplus(W_j v + c_j), per sample: shape (N,).

        Differentiable: the gradient of mean F(data) - mean F(model samples) is the
        CD estimate of the negative log-likelihood gradient.
        """
        self._check(v)
        return -(v @ self.visible_bias) - F.softplus(F.linear(v, self.weight, self.hidden_bias)
                                                     ).sum(axis=1)

    # -- sampling, on plain arrays: no graph is recorded ---------------------------------
    def hidden_probs(self, v: Any) -> Any:
        """p(h = 1 | v), shape (N, n_hidden)."""
        return sigmoid_array(v @ self.weight.array.T + self.hidden_bias.array)

    def visible_probs(self, h: Any) -> Any:
        """p(v = 1 | h), shape (N, n_visible)."""
        return sigmoid_array(h @ self.weight.array + self.visible_bias.array)

    def sample_hidden(self, v: Any) -> tuple[Any, Any]:
        """(p(h|v), a Bernoulli sample of h)."""
        p = self.hidden_probs(v)
        return p, _bernoulli(p)

    def sample_visible(self, h: Any) -> tuple[Any, Any]:
        """(p(v|h), a Bernoulli sample of v)."""
        p = self.visible_probs(h)
        return p, _bernoulli(p)

    def gibbs(self, v: Any, k: int = 1, first_hidden: Any = None) -> Any:
        """Run k steps v -> h -> v of block Gibbs sampling; return the last visible sample.
        `first_hidden`: p(h | v) for the first step, where the caller has it already."""
        v = np.asarray(getattr(v, "array", v))
        return self._chain(v, k, first_hidden, self._kernels(fused.loaded(), v))

    def _chain(self, v: Any, k: int, first_hidden: Any, kernels: Any) -> Any:
        """gibbs, with the compiled kernels where given (`_kernels`)."""
        if k < 1:
            raise ValueError(f"RBM.gibbs: k must be >= 1; got {k}")
        for step in range(k):
            p = first_hidden if step == 0 and first_hidden is not None else self._hidden(
                v, kernels)[1]
            if kernels is None:
                _, v = self.sample_visible(_bernoulli(p))
                continue
            # the uniforms NumPy's path draws (_bernoulli's), in its order
            u_h = state.rng().random(p.shape, dtype=np.float32)
            u_v = state.rng().random(v.shape, dtype=np.float32)
            v = np.empty((p.shape[0], self.n_visible), np.float32)
            kernels.gibbs_step(p, u_h, self.weight.array, self.visible_bias.array, u_v, v)
        return v

    def _kernels(self, kernels: Any, v: Any, *arrays: Any) -> Any:
        """`kernels` (the compiled ones, or None) where they take the parameters and the
        batch v with these arrays (float32, contiguous), and v is a small enough batch of
        samples (N, V), else None: NumPy's path, which also samples from one sample (V,)."""
        params = (self.weight.array, self.visible_bias.array, self.hidden_bias.array)
        small = np.ndim(v) == 2 and len(v) * self.n_visible * self.n_hidden <= COMPILED_UP_TO
        return kernels if small and kernels is not None and fused.fits(*params, v, *arrays) \
            else None

    def _hidden(self, v: Any, kernels: Any) -> tuple[Any, Any]:
        """(W v + c, p(h | v)), with the compiled kernels where given."""
        if kernels is None:
            pre = v @ self.weight.array.T
            pre += self.hidden_bias.array
            return pre, sigmoid_array(pre)
        pre = np.empty((v.shape[0], self.n_hidden), np.float32)
        p = np.empty_like(pre)
        kernels.hidden_pass(v, self.weight.array, self.hidden_bias.array, pre, p)
        return pre, p

    def statistics(self, v: Any) -> dict[str, Any]:
        """Sufficient statistics <h v^T>, <v>, <h> (h as p(h|v)), named like the parameters.

        CD-k's update is statistics(data) - statistics(k-step samples); it equals minus
        the gradient of the free-energy difference.
        """
        v = np.asarray(getattr(v, "array", v))
        h = self.hidden_probs(v)
        n = v.shape[0]
        return {"weight": h.T @ v / n, "visible_bias": v.mean(axis=0),
                "hidden_bias": h.mean(axis=0)}

    def contrastive_divergence(self, v: Any, k: int = 1, start: Any = None
                               ) -> tuple[dict[str, Any], Any, dict[str, float]]:
        """One CD-k estimate on the batch v, in arrays, sharing what the pieces share:
        (gradients by parameter name, the chain's last visible sample, measures).

        The chain runs k Gibbs steps from `start` (v where None: CD; a persistent chain:
        PCD). The gradients are statistics(chain) - statistics(v), those of mean F(v) -
        mean F(chain); the measures are that free-energy gap as `loss`, and
        reconstruction_error and pseudo_log_likelihood of v, computed from p(h | v) and
        W v + c once. Random numbers are drawn as gibbs, then pseudo_log_likelihood, draw
        them."""
        v = np.asarray(getattr(v, "array", v))
        W, b = self.weight.array, self.visible_bias.array
        first = v if start is None else np.asarray(getattr(start, "array", start))
        kernels = self._kernels(fused.compiled(), v, first)
        pre, h = self._hidden(v, kernels)
        vk = self._chain(first, k, h if start is None else None, kernels)
        pre_k, h_k = self._hidden(vk, kernels)
        n = v.shape[0]
        # One unit flipped per sample: W v + c moves by that unit's column, signed.
        idx = state.rng().integers(0, self.n_visible, n)
        if kernels is not None:
            grads = {"weight": np.empty_like(W), "visible_bias": np.empty_like(b),
                     "hidden_bias": np.empty_like(self.hidden_bias.array)}
            gap, soft_gap, miss = kernels.cd_statistics(
                v, vk, h, h_k, pre, pre_k, W, b, idx, *grads.values())
            return grads, vk, {"loss": gap / n, "recon_error": miss / v.size,
                               "pseudo_ll": -soft_gap * self.n_visible / n}
        dv = vk.sum(axis=0) - v.sum(axis=0)
        grads = {"weight": (h_k.T @ vk - h.T @ v) / n, "visible_bias": dv / n,
                 "hidden_bias": (h_k - h).sum(axis=0) / n}
        sign = 1 - 2 * v[np.arange(n), idx]
        flipped = pre + W[:, idx].T * sign[:, None]
        # sum_j softplus((W v + c)_j) for the data, the chain and the flipped data at once
        soft = softplus_array(np.concatenate((pre, pre_k, flipped))).sum(axis=1)
        # mean F(v) - mean F(chain), F(v) = -v . b - sum_j softplus((W v + c)_j)
        loss = float(dv @ b + soft[n:2 * n].sum() - soft[:n].sum()) / n
        gap = soft[:n] - soft[2 * n:] - sign * b[idx]  # F(v flipped) - F(v)
        pseudo = -float(softplus_array(-gap).sum()) * self.n_visible / n
        miss = v - self.visible_probs(h)
        recon = float(np.vdot(miss, miss)) / miss.size
        return grads, vk, {"loss": loss, "recon_error": recon, "pseudo_ll": pseudo}

    def reconstruction_error(self, v: Any) -> float:
        """Mean squared error between v and p(v | h ~ p(h|v)), one step, per element."""
        v = np.asarray(getattr(v, "array", v))
        recon = self.visible_probs(self.hidden_probs(v))
        return float(np.mean((v - recon) ** 2))

    def pseudo_log_likelihood(self, v: Any) -> float:
        """Stochastic pseudo-log-likelihood: n_visible * log s(F(v_flip) - F(v)), one random
        unit flipped per sample (Besag, 1975), averaged over samples."""
        v = np.asarray(getattr(v, "array", v))
        idx = state.rng().integers(0, self.n_visible, v.shape[0])
        flipped = v.copy()
        rows = np.arange(v.shape[0])
        flipped[rows, idx] = 1 - flipped[rows, idx]
        gap = self._free_energy_array(flipped) - self._free_energy_array(v)
        return float(np.mean(self.n_visible * -softplus_array(-gap)))

    def _free_energy_array(self, v: Any) -> Any:
        pre = v @ self.weight.array.T + self.hidden_bias.array
        return -(v @ self.visible_bias.array) - softplus_array(pre).sum(axis=1)

    def get_config(self) -> dict[str, Any]:
        return {"n_visible": self.n_visible, "n_hidden": self.n_hidden}


def _bernoulli(p: Any) -> Any:
    """A sample of units on with probabilities p, as p's dtype."""
    u = state.rng().random(p.shape, dtype=np.float32)
    return (u < p).astype(p.dtype)
