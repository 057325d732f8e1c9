"""The matrix product, with NumPy's matmul semantics: batched, vectors promoted."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina import allocator
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import axis_order, gemm_rows, in_order, pooled_matmul, sum_to
from lamina.functions.operands import operands
from lamina.fused import mkl_blas


class MatMul(Function):
    complex_rule = "holomorphic"

    def forward(self, a: Any, b: Any) -> Any:
        if a.ndim == 0 or b.ndim == 0 or a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
            raise ShapeError(
                f"matmul: inner dimensions differ; expected a.shape[-1] == b.shape[-2], got "
                f"{a.shape} @ {b.shape}"
            )
        need_a, need_b = self.needs_input_grad
        self.save_for_backward(a if need_b else None, b if need_a else None)
        self.a_meta, self.b_meta = (a.shape, a.dtype), (b.shape, b.dtype)
        # A stack viewed with its axes permuted (attention's heads: a projection's columns
        # reshaped and transposed) gets its gradient laid out as its memory is: the
        # transpose and reshape that hand it back are then views, not copies.
        self.orders = (memory_order(a) if need_a and b.ndim > 2 else None,
                       memory_order(b) if need_b and a.ndim > 2 else None)
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
        order_a, order_b = self.orders
        if self.needs_input_grad[0]:
            bT = np.swapaxes(b.reshape(b_mat), -1, -2)
            ga = (gemm_rows(gy, bT) if stacked_a
                  else product_in_order(gy, bT, order_a, a_shape, a_dtype))
            ga = sum_to(ga, a_mat).reshape(a_shape).astype(a_dtype, copy=False)
        if self.needs_input_grad[1]:
            if stacked_a:  # summed over the rows by the GEMM itself, not a stack of them
                gb = mkl_blas.matmul(a.reshape(-1, a_shape[-1]).T, gy.reshape(-1, gy.shape[-1]))
            else:
                gb = product_in_order(np.swapaxes(a.reshape(a_mat), -1, -2), gy, order_b,
                                      b_shape, b_dtype)
            gb = sum_to(gb, b_mat).reshape(b_shape).astype(b_dtype, copy=False)
        return ga, gb


def memory_order(x: Any) -> list[int] | None:
    """The axes of a stack x (3-D or more) in the order its memory runs (axis_order), where
    that is not their order (a permuted view), else None."""
    if x.ndim < 3 or x.flags.c_contiguous or 0 in x.strides:
        return None
    order = axis_order(x)
    return None if order == list(range(x.ndim)) else order


def product_in_order(a: Any, b: Any, order: list[int] | None, shape: tuple[int, ...],
                     dtype: Any) -> Any:
    """a @ b, a gradient of the operand of `shape`: laid out in memory in `order` (see
    memory_order) where it is that operand's own shape and dtype, else as pooled_matmul
    lays it out; pooled past the mmap threshold, as pooled_matmul's."""
    if order is None:
        return pooled_matmul(a, b)
    out_shape = (*np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), a.shape[-2], b.shape[-1])
    if out_shape != shape or np.result_type(a, b) != dtype:
        return pooled_matmul(a, b)
    out = in_order(allocator.empty(math.prod(shape), dtype), shape, order)
    return mkl_blas.matmul(a, b, out=out)


def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product with NumPy's `matmul` semantics (batched, vectors promoted).

    Raises:
        ShapeError: the inner dimensions differ; the message shows both shapes.
    """
    return MatMul().apply(*operands(a, b))
