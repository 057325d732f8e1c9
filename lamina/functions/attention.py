"""Scaled dot-product attention, composed from matmul, softmax and a constant mask.

Composed rather than fused: each piece already has a checked backward, and an execution
plan traces the pieces like any other ops.
"""

from __future__ import annotations

import math

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.activation import softmax
from lamina.functions.math import matmul, transpose
from lamina.functions.noise import dropout


def causal_mask(queries: int, keys: int, dtype: np.dtype) -> np.ndarray:
    """(queries, keys): 0 where query i may see key j (j <= i), -inf where it may not."""
    mask = np.zeros((queries, keys), dtype)
    mask[np.triu_indices(queries, 1, keys)] = -np.inf
    return mask


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False,
                                 scale: float | None = None, dropout_p: float = 0.0) -> Tensor:
    """softmax(q @ k^T * scale) @ v over the last two axes, as PyTorch's function of that
    name; leading axes (batch, heads) broadcast.

    Args:
        q: queries (..., L, D).
        k: keys (..., S, D).
        v: values (..., S, Dv).
        causal: query i attends to keys 0..i only (for L == S, the usual decoder mask).
        scale: defaults to 1 / sqrt(D).
        dropout_p: drop this share of the attention weights (as PyTorch's, whenever it is
            above 0: a layer passes 0 in evaluation).

    Returns:
        (..., L, Dv).

    Raises:
        ShapeError: the feature sizes of q and k, or the lengths of k and v, differ.
    """
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"scaled_dot_product_attention: expected q (..., L, D), k (..., S, D) "
                         f"and v (..., S, Dv); got q {q.shape}, k {k.shape}, v {v.shape}")
    axes = (*range(k.ndim - 2), k.ndim - 1, k.ndim - 2)
    scores = matmul(q, transpose(k, axes)) * (scale if scale is not None
                                              else 1.0 / math.sqrt(q.shape[-1]))
    if causal:
        scores = scores + causal_mask(q.shape[-2], k.shape[-2], scores.dtype)
    weights = softmax(scores, axis=-1)
    return matmul(dropout(weights, dropout_p) if dropout_p else weights, v)
