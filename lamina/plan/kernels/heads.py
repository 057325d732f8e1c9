"""A fused projection's queries, keys and values cut into attention heads, as one kernel:
what a plan makes of split -> view -> transpose (plan.rewrite.split_heads).

`q, k, v = qkv.split(E, dim=2)` and `q.view(B, T, H, D).transpose(1, 2)` (nanoGPT's
attention, and nn.MultiheadAttention's over one sequence) leave each of q, k and v a
strided view of the projection: its rows 3E apart, its heads D apart. The attention's
products then read stacks of matrices that no one stride walks, which BLAS takes slower
than contiguous ones, or NumPy one matrix at a time; four of the six read them in the
backward. And the backward hands each gradient through two copies: the view's (a
transposed array flattened into rows) and the split's (the three joined). Here each of
q, k and v is copied once into contiguous (B, H, T, D) memory, and the backward writes
the three gradients into their places in the projection's gradient: one copy each way.
Given the projection's bias, the copy adds it (plan.rewrite_bias; see kernels/bias.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused
from lamina.autograd.function import Function
from lamina.plan.kernels.base import Kernel
from lamina.plan.kernels.bias import bias_gradient


class SplitHeads(Kernel, Function):
    """x (B, T, parts * H * D) -> `parts` arrays (B, H, T, D): the split of x's last
    axis into `parts` equal pieces, each viewed as (B, T, H, D) and its axes 1 and 2
    swapped, each contiguous; with b (parts * H * D,), the split of x + b."""

    writes_output = True

    def __init__(self, parts: int, heads: int) -> None:
        self.parts, self.heads = parts, heads

    def _cut(self, a: Any) -> Any:
        """a (..., parts * H * D) as (..., parts, H, D), a view where a's memory allows."""
        return a.reshape(*a.shape[:-1], self.parts, self.heads, -1)

    def _pieces(self, a: Any) -> Any:
        """a (B, T, parts * H * D) as (parts, B, H, T, D), a view where a's memory allows."""
        return self._cut(a).transpose(2, 0, 3, 1, 4)

    def forward(self, x: Any, b: Any = None) -> tuple[Any, ...]:
        self.x_meta = (x.shape, x.dtype)
        if b is not None:  # NumPy's add of a broadcast bias runs at half the speed of its copy
            cut, bias = self._cut(np.ascontiguousarray(x)), self._cut(b)
            kernel = fused.kernels().heads_bias
        outs = []
        for i, piece in enumerate(self._pieces(x)):
            out = self.out_buffer(i)
            out = np.empty(piece.shape, piece.dtype) if out is None else out
            if b is None:
                np.copyto(out, piece)
            else:
                kernel(cut, bias, i, out)
            outs.append(out)
        return tuple(outs)

    def backward(self, *gys: Any) -> Any:
        shape, dtype = self.x_meta
        gx = np.empty(shape, dtype)
        for piece, gy in zip(self._pieces(gx), gys):
            if gy is None:
                piece[...] = 0
            else:
                np.copyto(piece, gy)
        if len(self.needs_input_grad) == 1:
            return gx
        return gx, bias_gradient(gx) if self.needs_input_grad[1] else None
