"""Causal attention by blocks of queries, as one kernel: what a plan makes of
matmul(q, k^T) -> causal AttentionSoftmax -> matmul(weights, v)
(plan.rewrite_attention.causal_blocks).

Under a causal mask, query i sees keys 0..i: the scores above the diagonal are thrown
away, and the weights there are zeros that the products with v (and all four products of
the backward) multiply anyway, half the work at every length. Cut into `blocks` blocks of
queries, block b (rows r0..r1) needs only the keys before r1: its scores are
q[r0:r1] @ k[:r1]^T, its weights softmax those, its output weights @ v[:r1]; the backward
likewise, the keys' and values' gradients summed over the blocks that see them. The
products then do (blocks + 1) / (2 blocks) of the work: 3/4 in two blocks, 5/8 in four,
and the weights kept for backward shrink as much; but smaller products run further
from BLAS's speed (see blocks_for). Each block is one product of stacked matrices, as
the whole was. The same values as the ops apart, to float rounding (the products sum the
same terms).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import parallel
from lamina.autograd.function import Function
from lamina.functions._util import pooled_matmul
from lamina.functions.attention import AttentionSoftmax
from lamina.fused.mkl_blas import matmul
from lamina.plan.kernels.base import Kernel

# Below MIN_LENGTH keys the blocks' products are too small to run near BLAS's speed, and
# the work they skip costs more than it saves (a toy transformer's 50 keys). From there,
# blocks of about BLOCK_ROWS queries, at least two and at most MAX_BLOCKS: products that
# size keep near BLAS's speed (the lengths measured: benchmarks/RESULTS.md).
MIN_LENGTH, BLOCK_ROWS, MAX_BLOCKS = 128, 128, 4


def blocks_for(length: int) -> int:
    """How many blocks of queries a causal attention over `length` keys runs in."""
    if length < MIN_LENGTH:
        return 1
    return max(2, min(MAX_BLOCKS, length // BLOCK_ROWS))


class CausalAttention(Kernel, Function):
    """softmax(q @ k^T * scale, causal) @ v over the last two axes of q (..., T, D), k
    (..., T, D) and v (..., T, Dv), by `blocks` blocks of queries."""

    writes_output = True

    def __init__(self, scale: float, blocks: int) -> None:
        self.scale, self.blocks = float(scale), blocks

    def _edges(self, length: int) -> list[tuple[int, int]]:
        """The blocks' rows: `blocks` of them inside a share of a split step (parallel.
        in_task), whose products run on one thread; elsewhere one, the whole: BLAS's
        threads, woken for each product, make the blocks' smaller products cost more than
        the work they skip (batch-1 inference of a GPT)."""
        blocks = self.blocks if parallel.in_task() else 1
        cuts = [length * b // blocks for b in range(blocks + 1)]
        return [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if hi > lo]

    def forward(self, q: Any, k: Any, v: Any) -> Any:
        out = self.out_buffer()
        y = np.empty((*q.shape[:-1], v.shape[-1]), v.dtype) if out is None else out
        kT = np.swapaxes(k, -1, -2)
        weights = []
        self.edges = self._edges(q.shape[-2])  # backward's, whatever thread it runs on
        for r0, r1 in self.edges:
            scores = pooled_matmul(q[..., r0:r1, :], kT[..., :r1])
            p = AttentionSoftmax(self.scale, True, r0).probabilities(scores)
            matmul(p, v[..., :r1, :], out=y[..., r0:r1, :])
            weights.append(p)
        self.save_for_backward(q, k, v, *weights)
        return y

    def backward(self, gy: Any) -> tuple[Any, Any, Any]:
        q, k, v, *weights = self.saved_tensors
        need_q, need_k, need_v = self.needs_input_grad
        gy = np.ascontiguousarray(gy)  # often a transposed view: its blocks as plain stacks
        gq = np.empty_like(q) if need_q else None
        gk = np.empty_like(k) if need_k else None
        gv = np.empty_like(v) if need_v else None
        vT, first = np.swapaxes(v, -1, -2), True
        # The last block sees every key: it writes the keys' and values' gradients whole,
        # and each block before it adds into the keys it sees.
        for (r0, r1), p in reversed(list(zip(self.edges, weights))):
            g = gy[..., r0:r1, :]
            if need_v:
                _product_into(np.swapaxes(p, -1, -2), g, gv[..., :r1, :], first)
            if need_q or need_k:
                gs = AttentionSoftmax(self.scale, True, r0).gradient(
                    p, pooled_matmul(g, vT[..., :r1]))
                if need_q:
                    matmul(gs, k[..., :r1, :], out=gq[..., r0:r1, :])
                if need_k:
                    _product_into(np.swapaxes(gs, -1, -2), q[..., r0:r1, :], gk[..., :r1, :],
                                  first)
            first = False
        return gq, gk, gv


def _product_into(a: Any, b: Any, out: Any, first: bool) -> None:
    """out = a @ b where first, else out += a @ b."""
    if first:
        matmul(a, b, out=out)
    else:
        out += pooled_matmul(a, b)
