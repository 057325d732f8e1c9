"""`kl_divergence(p, q)`: KL(p || q) for two distributions of one kind, and `register_kl`
for a user's own pair, as in torch.distributions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.distributions.discrete import Bernoulli, Categorical
from lamina.distributions.distribution import Distribution
from lamina.distributions.normal import Normal, Uniform

_RULES: dict[tuple[type, type], Callable[[Any, Any], Tensor]] = {}


def register_kl(type_p: type, type_q: type) -> Callable[[Callable], Callable]:
    """Decorator: `fn(p, q)` computes KL(p || q) for p of type_p and q of type_q.

    Examples:
        >>> D = lm.distributions
        >>> @D.register_kl(D.Uniform, D.Normal)
        ... def _kl_uniform_normal(p, q):
        ...     return -p.entropy() - q.log_prob(p.mean)  # a rough stand-in
        >>> D.kl_divergence(D.Uniform(0.0, 1.0), D.Normal(0.5, 1.0)).shape
        lamina.Size([])
    """
    def register(fn: Callable) -> Callable:
        _RULES[(type_p, type_q)] = fn
        return fn
    return register


def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), elementwise over the batch shape.

    Raises:
        NotImplementedError: no rule for this pair of types (register one with
            `register_kl`).

    Examples:
        >>> N = lm.distributions.Normal
        >>> lm.distributions.kl_divergence(N(0.0, 1.0), N(1.0, 1.0))
        tensor(0.5000)
    """
    for (tp, tq), fn in _RULES.items():
        if isinstance(p, tp) and isinstance(q, tq):
            return fn(p, q)
    raise NotImplementedError(f"kl_divergence: no rule for {type(p).__name__} and "
                              f"{type(q).__name__}; register one with register_kl")


@register_kl(Normal, Normal)
def _normal_normal(p: Normal, q: Normal) -> Tensor:
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _categorical_categorical(p: Categorical, q: Categorical) -> Tensor:
    t = p.probs * (p.logits - q.logits)
    return t.masked_fill(q.probs == 0, float("inf")).masked_fill(p.probs == 0, 0.0).sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    t1 = p.probs * (p.logits.sigmoid().log() - q.logits.sigmoid().log())
    t2 = (1 - p.probs) * ((-p.logits).sigmoid().log() - (-q.logits).sigmoid().log())
    return t1 + t2


@register_kl(Uniform, Uniform)
def _uniform_uniform(p: Uniform, q: Uniform) -> Tensor:
    inside = (q.low <= p.low) & (p.high <= q.high)
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return result.masked_fill(~inside, float("inf"))
