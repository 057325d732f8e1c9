"""Max unpooling (PyTorch's max_unpool1d/2d/3d): the partial inverse of max pooling, each
value written back at the input position `max_pool*d(..., return_indices=True)` gave it,
zeros elsewhere. Its gradient reads the output's gradient at those positions."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.array import reshape
from lamina.functions.indexing import scatter
from lamina.functions.operands import constant_op
from lamina.functions.volume import per_axis


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """(N, C, L) pooled values back at their places in (N, C, L_out).

    Examples:
        >>> y, i = F.max_pool1d(lm.arange(8.0).reshape(1, 1, 8), 2, return_indices=True)
        >>> F.max_unpool1d(y, i, 2)
        tensor([[[0., 1., 0., 3., 0., 5., 0., 7.]]])
    """
    return unpool(input, indices, 1, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """(N, C, H, W) pooled values back at their places in (N, C, H_out, W_out)."""
    return unpool(input, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """(N, C, D, H, W) pooled values back at their places in (N, C, D_out, H_out, W_out)."""
    return unpool(input, indices, 3, kernel_size, stride, padding, output_size)


def unpool(input: Tensor, indices: Tensor, nd: int, kernel_size: Any, stride: Any,
           padding: Any, output_size: Any) -> Tensor:
    """max_unpool over the last `nd` axes; an input of nd + 1 axes is one unbatched sample."""
    op = f"max_unpool{nd}d"
    if input.ndim not in (nd + 1, nd + 2):
        raise ShapeError(f"{op}: expected a {nd + 1}-D or {nd + 2}-D input; got shape "
                         f"{tuple(input.shape)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise ShapeError(f"{op}: indices must have the input's shape {tuple(input.shape)} (as "
                         f"max_pool{nd}d(..., return_indices=True) gives them); got "
                         f"{tuple(indices.shape)}")
    if input.ndim == nd + 1:
        return unpool(input.unsqueeze(0), indices.unsqueeze(0), nd, kernel_size, stride,
                      padding, output_size).squeeze(0)
    kernel = per_axis(kernel_size, nd, f"{op}: kernel_size")
    stride = kernel if stride is None else per_axis(stride, nd, f"{op}: stride")
    padding = per_axis(padding, nd, f"{op}: padding")
    size = _output_size(op, input.shape[2:], kernel, stride, padding, output_size)
    n, c, plane = input.shape[0], input.shape[1], math.prod(size)
    flat = indices.array.reshape(n, c, -1)
    if flat.size and (flat.min() < 0 or flat.max() >= plane):
        bad = flat.max() if flat.max() >= plane else flat.min()
        raise IndexError(f"{op}: found an invalid max index {bad}: the output planes are "
                         f"{'x'.join(map(str, size))} ({plane} elements); pass the "
                         "output_size the pooling's input had")
    # The indices as tensor ops read them (a plan's trace replays those, not arrays).
    where = reshape(indices, (n, c, -1))
    if where.dtype != np.int64:
        where = constant_op(functools.partial(np.asarray, dtype=np.int64), where)
    zeros = Tensor(np.zeros((n, c, plane), input.dtype))
    return reshape(scatter(zeros, 2, where, reshape(input, (n, c, -1))), (n, c, *size))


def _output_size(op: str, sizes: Any, kernel: tuple[int, ...], stride: tuple[int, ...],
                 padding: tuple[int, ...], output_size: Any) -> list[int]:
    """PyTorch's rule: (L - 1) * stride - 2 * padding + kernel per axis, or output_size's
    last axes, each strictly within one stride of that."""
    default = [(n - 1) * s - 2 * p + k for n, s, p, k in zip(sizes, stride, padding, kernel)]
    if output_size is None:
        return default
    size = [int(v) for v in output_size]
    if len(size) == len(default) + 2:
        size = size[2:]
    if len(size) != len(default):
        raise ValueError(f"{op}: output_size should have {len(default)} or "
                         f"{len(default) + 2} elements; got {list(output_size)}")
    for d, (want, base, s) in enumerate(zip(size, default, stride)):
        if not base - s < want < base + s:
            raise ValueError(f"{op}: invalid output_size {size} (dim {d} must be between "
                             f"{base - s} and {base + s}, both excluded)")
    return size
