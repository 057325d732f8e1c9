"""`linear_cross_entropy`, PyTorch 2.13's fused head: the cross-entropy of
`input @ linear_weight.T (+ linear_bias)` against `target`, with cross_entropy's options.

PyTorch's `options` chooses a chunked path that never holds the whole (N, C) logits;
lamina computes the logits whole, so the values are the same and `options` only changes
nothing (the memory saving is not built).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.functions.loss import cross_entropy


@dataclass
class LinearCrossEntropyOptions:
    """PyTorch's chunking options for `linear_cross_entropy`, accepted as given.

    Examples:
        >>> F.LinearCrossEntropyOptions(batch_chunk_size=64).batch_chunk_size
        64
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,  # noqa: A002
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0,
                         options: LinearCrossEntropyOptions | None = None) -> Tensor:
    """Cross-entropy of the logits `input @ linear_weight.T + linear_bias`: input (N, in) or
    (in,), linear_weight (C, *out_features, in) for a K-dimensional loss.

    Examples:
        >>> x, w = lm.zeros(2, 3), lm.zeros(4, 3)
        >>> round(F.linear_cross_entropy(x, w, lm.tensor([0, 3])).item(), 4)   # log(4)
        1.3863
    """
    if input.ndim not in (1, 2):
        raise RuntimeError(f"linear_cross_entropy: expected input with dimensionality 1 or 2, "
                           f"got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError("linear_cross_entropy: expected linear_weight with dimensionality "
                           f"at least 2, got {linear_weight.ndim}")
    batch, features = tuple(input.shape[:-1]), input.shape[-1]
    if features != linear_weight.shape[-1]:
        raise RuntimeError("linear_cross_entropy: expected equal input and linear_weight last "
                           f"dimensions (in_features), got {features} and "
                           f"{linear_weight.shape[-1]}, respectively")
    classes, out = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out):
        raise RuntimeError(f"linear_cross_entropy: expected linear_bias shape "
                           f"{(classes, *out)}, got {tuple(linear_bias.shape)}")
    if out and not batch:
        raise RuntimeError(f"linear_cross_entropy: a K-dimensional loss needs batched input "
                           f"(N, {features}); got shape {tuple(input.shape)}")
    logits = (input @ linear_weight.reshape(-1, features).t()).reshape(*batch, classes, *out)
    if linear_bias is not None:
        logits = logits + linear_bias
    probabilities = tuple(target.shape) == tuple(logits.shape)
    if probabilities and ignore_index is not None:
        raise RuntimeError("linear_cross_entropy: ignore_index cannot be specified when "
                           "target contains probabilities")
    return cross_entropy(logits, target, weight,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)
