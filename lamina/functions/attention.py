"""Scaled dot-product attention, composed from matmul, softmax and a constant mask.

Composed rather than fused: each piece already has a checked backward, and an execution
plan traces the pieces like any other ops. The one fusion is the scores' scale, causal
mask and softmax (AttentionSoftmax): one op, one pass over the scores each way where the
fused kernels run, instead of three ops with a scores-sized array each.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.activation_softmax import Softmax, softmax
from lamina.functions.array import transpose
from lamina.functions.axis_reductions import max as maximum
from lamina.functions.noise import dropout
from lamina.functions.operands import astype
from lamina.functions.product import matmul


def causal_mask(queries: int, keys: int, dtype: np.dtype, offset: int = 0) -> np.ndarray:
    """(queries, keys): 0 where query i may see key j (j <= i + offset), -inf where it may
    not. offset: the first row's query, where the rows are a block of the queries."""
    mask = np.zeros((queries, keys), dtype)
    mask[np.triu_indices(queries, 1 + offset, keys)] = -np.inf
    return mask


class AttentionSoftmax(Softmax):
    """softmax(x * scale + mask) over the last axis of attention's scores x (..., L, S),
    the mask causal (query i sees keys 0..i) or none. offset: the query of x's first row,
    where x holds a block of the queries (its row i then sees keys 0..offset + i)."""

    def __init__(self, scale: float, causal: bool, offset: int = 0) -> None:
        super().__init__(-1)
        self.scale, self.causal, self.offset = float(scale), bool(causal), int(offset)

    def forward(self, x: Any) -> Any:
        if x.ndim < 2:
            raise ShapeError(f"attention softmax: expected scores (..., L, S); got {x.shape}")
        return super().forward(x)

    def _scores(self, x: Any) -> Any:
        z = x * x.dtype.type(self.scale)
        if self.causal:
            z += causal_mask(x.shape[-2], x.shape[-1], x.dtype, self.offset)
        return z


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Any = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False, *, causal: bool | None = None
                                 ) -> Tensor:
    """softmax(q @ k^T * scale + mask) @ v over the last two axes, with PyTorch's signature;
    leading axes (batch, heads) broadcast.

    Args:
        query: (..., L, D).
        key: (..., S, D).
        value: (..., S, Dv).
        attn_mask: broadcastable to (..., L, S), an array or a Tensor. Boolean: True where
            a query may attend to a key, as in PyTorch's function (combined with
            `is_causal`). A query that may attend to no key gets zeros and passes no
            gradient, as with PyTorch's function (never NaN, which would reach every
            gradient). Floating: added to the scores (-inf to mask; a learned bias takes
            gradients).
        dropout_p: drop this share of the attention weights (as PyTorch's, whenever it is
            above 0: a layer passes 0 in evaluation).
        is_causal: query i attends to keys 0..i only (for L == S, the usual decoder mask).
        scale: defaults to 1 / sqrt(D).
        enable_gqa: key and value may have fewer heads (axis -3) than query, a divisor of
            its count; each serves a group of query heads.
        causal: lamina's earlier name for is_causal.

    Returns:
        (..., L, Dv).

    Raises:
        ShapeError: the feature sizes of q and k, or the lengths of k and v, differ; or
            the mask does not broadcast to (..., L, S).
    """
    q, k, v = query, key, value
    is_causal = is_causal or bool(causal)
    if enable_gqa and q.ndim >= 3 and k.ndim >= 3 and k.shape[-3] != q.shape[-3]:
        if q.shape[-3] % k.shape[-3] or k.shape[-3] != v.shape[-3]:
            raise ShapeError(f"scaled_dot_product_attention: with enable_gqa, key and value "
                             f"need a head count that divides the query's; got query "
                             f"{tuple(q.shape)}, key {tuple(k.shape)}, value {tuple(v.shape)}")
        group = q.shape[-3] // k.shape[-3]
        k, v = (t.repeat_interleave(group, dim=-3) for t in (k, v))
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"scaled_dot_product_attention: expected q (..., L, D), k (..., S, D) "
                         f"and v (..., S, Dv); got q {tuple(q.shape)}, k {tuple(k.shape)}, "
                         f"v {tuple(v.shape)}")
    mask = _as_mask(attn_mask, q, k)
    allowed = astype(mask, q.dtype) if mask is not None and mask.dtype == bool else None
    return attend(q, k, v, allowed, mask if allowed is None else None, is_causal, scale,
                  dropout_p)


def attend(q: Tensor, k: Tensor, v: Tensor, allowed: Tensor | None, bias: Tensor | None,
           causal: bool, scale: float | None, dropout_p: float) -> Tensor:
    """Attention with the masks in two forms: `allowed`, 1.0 where a query may attend to a
    key and 0.0 where not (a query with no key gets zeros), and `bias`, added to the
    scores. Either may be None."""
    weights = attention_weights(q, k, allowed, bias, causal, scale)
    return matmul(dropout(weights, dropout_p) if dropout_p else weights, v)


def attention_weights(q: Tensor, k: Tensor, allowed: Tensor | None, bias: Tensor | None,
                      causal: bool, scale: float | None) -> Tensor:
    """softmax(q @ k^T * scale + masks) over the keys: (..., L, S), the weights `attend`
    applies to the values (before dropout)."""
    axes = (*range(k.ndim - 2), k.ndim - 1, k.ndim - 2)
    scale = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    scores = matmul(q, transpose(k, axes))
    if allowed is None and bias is None:
        return AttentionSoftmax(scale, causal).apply(scores)
    scores = scores * scale
    if bias is not None:
        scores = scores + bias
    if allowed is None:
        if causal:
            scores = scores + causal_mask(q.shape[-2], k.shape[-2], scores.dtype)
        return softmax(scores, axis=-1)
    if causal:
        allowed = allowed * (causal_mask(q.shape[-2], k.shape[-2], q.dtype) == 0
                             ).astype(q.dtype)
    # A finite stand-in for -inf, so that a query with no key left takes a uniform
    # softmax (finite, and then zeroed) instead of 0/0.
    scores = scores + (allowed - 1.0) * MASKED
    return softmax(scores, axis=-1) * maximum(allowed, axis=-1, keepdims=True)


MASKED = 1e30  # exp(-1e30 + anything a score holds) is 0 in float32 and float64


def _as_mask(mask: Any, q: Tensor, k: Tensor) -> Tensor | None:
    """The mask as a Tensor (boolean, or in q's float dtype), checked against (..., L, S)."""
    if mask is None:
        return None
    mask = mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask))
    want = (q.shape[-2], k.shape[-2])
    target = (*np.broadcast_shapes(q.shape[:-2], k.shape[:-2]), *want)
    try:
        fits = np.broadcast_shapes(mask.shape, target) == target
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"scaled_dot_product_attention: attn_mask of shape "
                         f"{tuple(mask.shape)} does not broadcast to (..., L, S) = "
                         f"(..., {want[0]}, {want[1]}) for q "
                         f"{tuple(q.shape)} and k {tuple(k.shape)}")
    return typed_mask(mask, q.dtype, "scaled_dot_product_attention: attn_mask must be boolean "
                                     "(True where a query may attend)")


def typed_mask(mask: Tensor, dtype: np.dtype, what: str) -> Tensor:
    """A boolean mask as it is, a floating one in `dtype` (cast with its gradient); any
    other is a TypeError that starts with `what` (whose mask, and what its True means)."""
    if mask.dtype == bool:
        return mask
    if mask.dtype.kind != "f":
        raise TypeError(f"{what} or floating (added to the scores); got {mask.dtype}")
    return mask if mask.dtype == dtype else astype(mask, dtype)
