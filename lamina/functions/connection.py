"""Ops that connect inputs to weights: linear (fully connected) and embedding lookup."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError


class Linear(Function):
    # Fused x @ W.T + b: one GEMM and one bias pass instead of three recorded ops.
    supports_out = True
    # Which side of the GEMM the batch goes on: BLAS speed differs by shape and machine
    # (up to 15% on the MLP workload), so a tuned plan times both.
    variants = ("x@W.T", "W@x.T")

    def forward(self, x: Any, W: Any, b: Any = None) -> Any:
        if x.ndim == 0 or x.shape[-1] != W.shape[1]:
            raise ShapeError(
                f"linear: input features do not match the weight; expected (..., {W.shape[1]}) "
                f"for W of shape {W.shape}, got {x.shape}"
            )
        need_x, need_W = self.needs_input_grad[:2]
        self.save_for_backward(x if need_W else None, W if need_x else None)
        # gx takes x's layout: the op that made x (often an elementwise op holding a mask
        # in that layout) reads gx next, and mixed layouts make it a strided pass, 3-8x
        # slower than a contiguous one.
        self.x_transposed = x.ndim == 2 and x.flags.f_contiguous and not x.flags.c_contiguous
        # A non-finite input gives non-finite outputs and no NumPy warning, as in PyTorch
        # (some BLAS kernels multiply it by padding zeros): the NaN guard reports it.
        with np.errstate(invalid="ignore", over="ignore"):
            if x.ndim == 2 and self.variant == "W@x.T":
                out = self.out_buffer()  # y.T is C-contiguous: that buffer's transposed view
                y = np.matmul(W, x.T,
                              out=None if out is None else out.reshape(out.shape[::-1])).T
            else:
                y = np.matmul(x, W.T, out=self.out_buffer())
        if b is not None:
            y += b
        return y

    def backward(self, gy: Any) -> tuple[Any, ...]:
        x, W = self.saved_tensors
        need = self.needs_input_grad
        gx = None
        if need[0]:
            gx = (W.T @ gy.T).T if self.x_transposed else gy @ W
        gW = None
        if need[1]:
            gW = gy.reshape(-1, gy.shape[-1]).T @ x.reshape(-1, x.shape[-1])
        if len(need) == 2:
            return gx, gW
        gb = gy.reshape(-1, gy.shape[-1]).sum(axis=0) if need[2] else None
        return gx, gW, gb


class Embedding(Function):
    def forward(self, ids: Any, W: Any) -> Any:
        if ids.dtype.kind not in "iu":
            raise TypeError(f"embedding: ids must be integers; got dtype {ids.dtype}")
        if ids.size and (ids.min() < 0 or ids.max() >= W.shape[0]):
            raise IndexError(
                f"embedding: ids must lie in [0, {W.shape[0]}); got values in "
                f"[{ids.min()}, {ids.max()}]"
            )
        self.ids, self.W_meta = ids, (W.shape, W.dtype)
        return W[ids]

    def backward(self, gy: Any) -> tuple[None, Any]:
        gW = np.zeros(*self.W_meta)
        ids = self.ids.ravel()
        rows = gy.reshape(-1, gW.shape[1])
        # Rows of repeated ids must be summed: sort the ids, then one segment sum per id.
        # (np.add.at does the same, an order of magnitude slower.)
        order = np.argsort(ids, kind="stable")
        uniq, starts = np.unique(ids[order], return_index=True)
        if len(uniq):
            gW[uniq] = np.add.reduceat(rows[order], starts, axis=0)
        return None, gW


def linear(x: Tensor, W: Tensor, b: Tensor | None = None) -> Tensor:
    """y = x @ W.T + b.

    Args:
        x: input of shape (..., in_features).
        W: weight of shape (out_features, in_features).
        b: optional bias of shape (out_features,).

    Returns:
        A tensor of shape (..., out_features).

    Raises:
        ShapeError: x's last axis is not W's in_features.

    Example:
        >>> y = F.linear(x, W, b)     # x (32, 784), W (10, 784), b (10,) -> y (32, 10)
    """
    if b is None:
        return Linear().apply(x, W)
    return Linear().apply(x, W, b)


def embedding(ids: Any, W: Tensor) -> Tensor:
    """Rows of W selected by integer ids.

    Args:
        ids: integer tensor or array of any shape, values in [0, num_embeddings).
        W: weight of shape (num_embeddings, embedding_dim).

    Returns:
        A tensor of shape ids.shape + (embedding_dim,).
    """
    return Embedding().apply(ids, W)
