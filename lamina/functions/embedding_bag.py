"""embedding_bag: the sum, mean or max of each bag of embeddings, without materialising
the bags (PyTorch's function, bags given as rows or by offsets)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.functions.array import stack
from lamina.functions.connection import embedding, renorm_


def embedding_bag(input: Any, weight: Tensor, offsets: Any = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """One vector per bag of ids: input (B, N) is B bags of N ids; a 1-D input is cut into
    bags starting at `offsets`. `mode` "sum" (each id weighted by `per_sample_weights` if
    given), "mean" or "max"; ids equal to `padding_idx` are left out, and an empty bag
    gives zeros.

    Examples:
        >>> F.embedding_bag(lm.tensor([0, 1, 2]), lm.eye(3), lm.tensor([0, 2]), mode="sum").tolist()
        [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode has to be one of sum, mean or max; got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    ids = input if isinstance(input, Tensor) else Tensor(np.asarray(input))
    bags, bag_of = _bags(ids.array, offsets, include_last_offset)
    flat = ids.reshape(-1)  # tensor ops throughout, so a compiled plan follows the ids
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if max_norm is not None:
        renorm_(weight, flat, max_norm, norm_type)
    rows = embedding(flat, weight, scale_grad_by_freq=scale_grad_by_freq)  # (L, D)
    member = Tensor((np.arange(bags)[:, None] == bag_of[None, :]).astype(weight.dtype))
    if padding_idx is not None:
        member = member * (flat != padding_idx).to(weight.dtype).reshape(1, -1)
    if mode == "max":
        empty = Tensor(np.zeros(weight.shape[1], weight.dtype))
        keep = member.array > 0
        return stack([rows[np.flatnonzero(keep[b])].amax(0) if keep[b].any() else empty
                      for b in range(bags)], 0)
    if per_sample_weights is not None:
        member = member * per_sample_weights.reshape(1, -1)
    sums = member @ rows
    if mode == "sum":
        return sums
    counts = (member != 0).to(weight.dtype).sum(1, keepdim=True)
    return sums / counts.clamp(min=1)


def _bags(ids: np.ndarray, offsets: Any, include_last_offset: bool
          ) -> tuple[int, np.ndarray]:
    """How many bags, and which bag each id (flattened) belongs to."""
    if ids.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: if input is 2D, then offsets has to be None, as "
                             "input is treated is a mini-batch of fixed length sequences.")
        return ids.shape[0], np.repeat(np.arange(ids.shape[0]), ids.shape[1])
    if ids.ndim != 1 or offsets is None:
        raise ValueError(f"embedding_bag: expected a 2-D input, or a 1-D input with offsets; "
                         f"got a {ids.ndim}-D input and offsets {offsets!r}")
    starts = np.asarray(getattr(offsets, "array", offsets)).astype(np.int64).reshape(-1)
    if include_last_offset:
        starts = starts[:-1]
    if len(starts) and (starts[0] != 0 or np.any(np.diff(starts) < 0)):
        raise ValueError(f"embedding_bag: offsets must start at 0 and not decrease; got "
                         f"{starts.tolist()}")
    return len(starts), np.searchsorted(starts, np.arange(len(ids)), side="right") - 1
