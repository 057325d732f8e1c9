"""Ops that connect inputs to weights: linear (fully connected) and embedding lookup."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import axis_order, column_sums, gemm_rows, in_order
from lamina.fused.mkl_blas import matmul


class Linear(Function):
    # Fused x @ W.T + b: one GEMM and one bias pass instead of three recorded ops.

    def forward(self, x: Any, W: Any, b: Any = None, *, out: Any = None) -> Any:
        """out: an array of the output's shape to write the result into (NumPy's out=)."""
        self.check_and_keep(x, W)
        # A non-finite input gives non-finite outputs and no NumPy warning, as in PyTorch
        # (some BLAS kernels multiply it by padding zeros): the NaN guard reports it.
        with np.errstate(invalid="ignore", over="ignore"):
            return self.product(x, W, b, out)

    def product(self, x: Any, W: Any, b: Any = None, out: Any = None) -> Any:
        """x @ W.T + b, once check_and_keep has run, without forward's errstate (a plan's
        step runs under one: see lamina.plan.program)."""
        if self.order is None or out is not None:
            return gemm_rows(x, W.T, out=out, add=b)
        y = gemm_rows(_stored_rows(x, self.order), W.T, add=b)
        return in_order(y.reshape(-1), (*x.shape[:-1], W.shape[0]), self.order)

    def check_and_keep(self, x: Any, W: Any) -> None:
        """Check the shapes; keep what backward needs."""
        if x.ndim == 0 or x.shape[-1] != W.shape[1]:
            raise ShapeError(
                f"linear: input features do not match the weight; expected (..., {W.shape[1]}) "
                f"for W of shape {tuple(W.shape)}, got {tuple(x.shape)}"
            )
        need_x, need_W = self.needs_input_grad[:2]
        self.save_for_backward(x if need_W else None, W if need_x else None)
        # gx takes x's layout: the op that made x (often an elementwise op holding a mask
        # in that layout) reads gx next, and mixed layouts make it a strided pass, 3-8x
        # slower than a contiguous one.
        self.x_transposed = x.ndim == 2 and x.flags.f_contiguous and not x.flags.c_contiguous
        self.order = _rows_order(x, W)

    def backward(self, gy: Any) -> tuple[Any, ...]:
        x, W = self.saved_tensors
        need = self.needs_input_grad
        order = self.order
        # The rows laid end to end once: a gradient that is a transposed view (a
        # batch-first head over a time-major layer) is copied here, not in each product;
        # in the order x's rows are stored in, where the products ran in that order.
        rows = (gy.reshape(-1, gy.shape[-1]) if order is None
                else _stored_rows(np.ascontiguousarray(np.transpose(gy, order)), None))
        gx = None
        if need[0]:
            if self.x_transposed:
                gx = (W.T @ gy.T).T
            elif order is None:
                gx = gemm_rows(rows, W).reshape(*gy.shape[:-1], W.shape[1])
            else:
                gx = in_order(gemm_rows(rows, W).reshape(-1), x.shape, order)
        gW = None
        if need[1]:
            xr = x.reshape(-1, x.shape[-1]) if order is None else _stored_rows(x, order)
            gW = matmul(rows.T, xr)
        if len(need) == 2:
            return gx, gW
        gb = column_sums(rows) if need[2] else None
        return gx, gW, gb


def _rows_order(x: Any, W: Any) -> list[int] | None:
    """The order of x's axes in memory, where x is a permutation of contiguous memory
    that keeps the features last (a batch-first view of a time-major recurrence's
    output) and the layer makes no more features than it reads; else None.

    Its products then run over x's rows as they are stored, and the output takes x's
    layout: no copy of x, forward or backward, and the gradient handed back is laid out
    as x is (the transpose before reads it in order). Only for outputs no wider than x:
    a consumer that needs them in order (a recurrence's x-gates) copies what this saved."""
    if x.ndim < 3 or x.flags.c_contiguous or W.shape[0] > W.shape[1]:
        return None
    order = axis_order(x)
    if order[-1] != x.ndim - 1 or not np.transpose(x, order).flags.c_contiguous:
        return None
    return order


def _stored_rows(a: Any, order: list[int] | None) -> Any:
    """a's rows (..., K) as a (rows, K) view in the order they are stored (a's axes in
    `order`; None: a is C-contiguous)."""
    stored = a if order is None else np.transpose(a, order)
    return stored.reshape(-1, a.shape[-1])


class Embedding(Function):
    versions = (0, 0)  # the ids' and the table's versions when F.embedding made the op

    def __init__(self, padding_idx: int | None = None, scale_grad_by_freq: bool = False
                 ) -> None:
        self.padding_idx, self.scale_grad_by_freq = padding_idx, scale_grad_by_freq

    def forward(self, ids: Any, W: Any) -> Any:
        check_ids("embedding", ids, W.shape[0])
        self.save_for_backward(ids)
        self.W_meta = (W.shape, W.dtype)
        return W[ids]

    def backward(self, gy: Any) -> tuple[None, Any]:
        gW = np.zeros(*self.W_meta)
        sum_rows_by_id(self.saved_tensors[0].ravel(), gy.reshape(-1, gW.shape[1]), gW,
                       self.scale_grad_by_freq)
        if self.padding_idx is not None:
            gW[self.padding_idx] = 0
        return None, gW


def check_ids(op: str, ids: Any, rows: int) -> None:
    """Raise where ids are not integers in [0, rows): the ids of a lookup in a table."""
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op}: ids must be integers; got dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= rows):
        raise IndexError(f"{op}: ids must lie in [0, {rows}); got values in "
                         f"[{ids.min()}, {ids.max()}]")


def sum_rows_by_id(ids: Any, rows: Any, out: Any, by_count: bool = False) -> None:
    """out[i] = the sum of the rows whose id is i (a lookup's gradient; out comes in as
    zeros), divided by their count where by_count."""
    compiled = fused.compiled()
    if compiled is not None and not by_count and fused.fits(out, rows):
        compiled.scatter_add_rows(ids, rows, out)  # in one pass, no sort (lamina.fused)
        return
    # Rows of repeated ids must be summed: sort the ids, then one segment sum per id.
    # (np.add.at does the same, an order of magnitude slower.)
    order = np.argsort(ids, kind="stable")
    uniq, starts, counts = np.unique(ids[order], return_index=True, return_counts=True)
    if len(uniq):
        out[uniq] = np.add.reduceat(rows[order], starts, axis=0)
        if by_count:
            out[uniq] /= counts[:, None]


def embedding(input: Any, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of `weight` selected by integer ids, PyTorch's function.

    Args:
        input: integer tensor or array of any shape, values in [0, num_embeddings).
        weight: (num_embeddings, embedding_dim).
        padding_idx: this row takes no gradient (it stays what it is, zeros by default).
        max_norm: rows looked up are first rescaled in place to at most this norm
            (of order `norm_type`), as PyTorch's.
        scale_grad_by_freq: divide each row's gradient by its count in the batch.
        sparse: accepted; gradients are dense.

    Returns:
        A tensor of shape input.shape + (embedding_dim,).

    Examples:
        >>> F.embedding(lm.tensor([[0, 2]]), lm.eye(3)).tolist()
        [[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]]
    """
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if max_norm is not None:
        renorm_(weight, input, max_norm, norm_type)
    op = Embedding(padding_idx, scale_grad_by_freq)
    # what a recurrent layer's input_projection checks before it reads ids and weight again
    op.versions = (getattr(input, "_version", 0), weight._version)
    return op.apply(input, weight)


def renorm_(weight: Tensor, ids: Any, max_norm: float, norm_type: float) -> None:
    """Rescale the rows of `weight` that `ids` name to norms of at most max_norm, in
    place and outside the graph (PyTorch's embedding_renorm_)."""
    rows = np.unique(np.asarray(getattr(ids, "array", ids)))
    norms = np.linalg.norm(weight.array[rows], ord=norm_type, axis=1)
    over = norms > max_norm
    weight.array[rows[over]] *= (max_norm / (norms[over] + 1e-7))[:, None].astype(weight.dtype)


def linear(x: Tensor, W: Tensor, b: Tensor | None = None) -> Tensor:
    """y = x @ W.T + b.

    Args:
        x: input of shape (..., in_features).
        W: weight of shape (out_features, in_features), or (in_features,): one output
            feature, its axis dropped.
        b: optional bias of shape (out_features,).

    Returns:
        A tensor of shape (..., out_features).

    Raises:
        ShapeError: x's last axis is not W's in_features.

    Examples:
        >>> y = F.linear(x, W, b)     # x (32, 784), W (10, 784), b (10,) -> y (32, 10)
    """
    if getattr(W, "ndim", 2) == 1:  # a vector of weights, as PyTorch takes it: x @ W
        if b is not None:
            raise RuntimeError("linear: a 1-D weight takes no bias, as in PyTorch (mat2 must "
                               "be a matrix); add the bias to the result instead")
        return x @ W
    if b is None:
        return Linear().apply(x, W)
    return Linear().apply(x, W, b)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """y_o = x1 . (weight_o x2) + bias_o over the last axes: x1 (*, in1), x2 (*, in2),
    weight (out, in1, in2) -> (*, out).

    Examples:
        >>> F.bilinear(lm.ones(2, 3), lm.ones(2, 4), lm.ones(5, 3, 4)).shape
        lamina.Size([2, 5])
    """
    out, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2 or input1.shape[:-1] != \
            input2.shape[:-1]:
        raise ShapeError(f"bilinear: expected inputs (*, {in1}) and (*, {in2}) with one "
                         f"leading shape for weight {tuple(weight.shape)}; got "
                         f"{tuple(input1.shape)} and "
                         f"{tuple(input2.shape)}")
    # (*, in1) @ (in1, out * in2) -> (*, out, in2), then a dot with x2 per output
    left = input1 @ weight.permute(1, 0, 2).reshape(in1, out * in2)
    y = (left.reshape(*input1.shape[:-1], out, in2) * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias
