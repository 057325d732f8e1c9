"""The matrix product, with NumPy's matmul semantics: batched, vectors promoted."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import gemm_rows, pooled_matmul, sum_to
from lamina.functions.operands import operands
from lamina.fused import mkl_blas


class MatMul(Function):
    def forward(self, a: Any, b: Any) -> Any:
        if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
            raise ShapeError(
                f"matmul: inner dimensions differ; expected a.shape[-1] == b.shape[-2], got "
                f"{a.shape} @ {b.shape}"
            )
        need_a, need_b = self.needs_input_grad
        self.save_for_backward(a if need_b else None, b if need_a else None)
        self.a_meta, self.b_meta = (a.shape, a.dtype), (b.shape, b.dtype)
        return gemm_rows(a, b) if b.ndim == 2 else pooled_matmul(a, b)

    def backward(self, gy: Any) -> tuple[Any, Any]:
        a, b = self.saved_tensors
        (a_shape, a_dtype), (b_shape, b_dtype) = self.a_meta, self.b_meta
        # Vectors act as matrices (a as a row, b as a column), as np.matmul treats them.
        a_mat = (1, *a_shape) if len(a_shape) == 1 else a_shape
        b_mat = (*b_shape, 1) if len(b_shape) == 1 else b_shape
        if len(b_shape) == 1:
            gy = np.expand_dims(gy, -1)
        if len(a_shape) == 1:
            gy = np.expand_dims(gy, -2)
        ga = gb = None
        stacked_a = len(a_shape) > 2 and len(b_shape) == 2  # (..., K) @ (K, N): flat rows
        if self.needs_input_grad[0]:
            bT = np.swapaxes(b.reshape(b_mat), -1, -2)
            ga = gemm_rows(gy, bT) if stacked_a else pooled_matmul(gy, bT)
            ga = sum_to(ga, a_mat).reshape(a_shape).astype(a_dtype, copy=False)
        if self.needs_input_grad[1]:
            if stacked_a:  # summed over the rows by the GEMM itself, not a stack of them
                gb = mkl_blas.matmul(a.reshape(-1, a_shape[-1]).T, gy.reshape(-1, gy.shape[-1]))
            else:
                gb = pooled_matmul(np.swapaxes(a.reshape(a_mat), -1, -2), gy)
            gb = sum_to(gb, b_mat).reshape(b_shape).astype(b_dtype, copy=False)
        return ga, gb


def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product with NumPy's `matmul` semantics (batched, vectors promoted).

    Raises:
        ShapeError: the inner dimensions differ; the message shows both shapes.
    """
    return MatMul().apply(*operands(a, b))
