"""A linear layer's bias added by the op that reads its output, in that op's own pass:
what a plan makes of linear(x, W, b) read by GELU alone, or by a residual sum alone
(plan.rewrite_bias).

The GEMM writes the layer's output, which leaves the cache as it is written; the bias is
then a pass of its own that reads and writes all of it again. GELU's pass and the sum's
read it anyway and add the bias there (as SplitHeads does in its copy, kernels/heads.py).
The bias's gradient is the column sums of the gradient this op hands back, which the
linear layer's backward would have summed: the same values, and the same ones forward,
where the same float32 sum of the product and the bias is rounded once in either place.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused
from lamina.autograd.function import Function
from lamina.functions._util import column_sums
from lamina.plan.kernels.base import Kernel


class BiasGELU(Kernel, Function):
    """gelu(x + b), the erf form, over float32 x (..., N) and b (N,)."""

    def forward(self, x: Any, b: Any) -> Any:
        rows = np.ascontiguousarray(x).reshape(-1, x.shape[-1])
        y, d = fused.gelu_bias(rows, b)
        self.save_for_backward(d if any(self.needs_input_grad) else None)
        return y.reshape(x.shape)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        (d,) = self.saved_tensors
        gx = fused.gelu_backward(d, np.ascontiguousarray(gy).reshape(d.shape))
        gb = bias_gradient(gx) if self.needs_input_grad[1] else None
        return gx.reshape(gy.shape), gb


class BiasAdd(Kernel, Function):
    """x + (z + b), float32 x and z of one shape (..., N) and b (N,): a residual sum that
    reads a linear layer's output z, the layer's bias added in the sum's pass. z + b is
    rounded before x is added, as the layer's own output was."""

    writes_output = True
    writes_over_input = True

    def forward(self, x: Any, z: Any, b: Any) -> Any:
        out = self.out_buffer()
        y = np.empty_like(z) if out is None else out
        if x.flags.c_contiguous and z.flags.c_contiguous and y.flags.c_contiguous:
            n = z.shape[-1]
            fused.kernels().add_bias(x.reshape(-1, n), z.reshape(-1, n), b,
                                     y.reshape(-1, n))
        else:
            np.add(x, np.add(z, b), out=y)
        return y

    def backward(self, gy: Any) -> tuple[Any, Any, Any]:
        need_x, need_z, need_b = self.needs_input_grad
        return (gy if need_x else None, gy if need_z else None,
                bias_gradient(gy) if need_b else None)


def bias_gradient(g: Any) -> Any:
    """A bias's gradient from the gradient g (..., N) of the sums it was added to."""
    return column_sums(np.ascontiguousarray(g).reshape(-1, g.shape[-1]))
