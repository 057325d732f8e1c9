"""Fractional max pooling (Graham, 2014), PyTorch's: windows of a fixed size whose start
positions advance by a fractional step, placed by one random number per sample, channel
and axis, so the output size may be any fraction of the input's.

The starts of an axis of n inputs pooled to m outputs with windows of k are PyTorch's
pseudo-random sequence: start i = floor((i + u) * a) - floor(u * a) with a = (n - k) /
(m - 1), and the last start n - k, computed in the input's dtype as PyTorch computes it,
so the same draws u give the same windows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import state
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import pair, unbatched


def _starts(u: Any, n: int, m: int, k: int) -> Any:
    """The window starts (..., m) along an axis for draws u (...)."""
    starts = np.empty((*u.shape, m), np.int64)
    if m > 1:
        alpha = u.dtype.type(n - k) / u.dtype.type(m - 1)
        i = np.arange(m - 1, dtype=u.dtype)
        starts[..., :-1] = ((i + u[..., None]) * alpha).astype(np.int64) - \
            (u * alpha).astype(np.int64)[..., None]
    starts[..., -1] = n - k
    return starts


class FractionalMaxPool(Function):
    """Max over the windows `_starts` places in (N, C, *spatial) input; the indices are
    flat positions in each input plane, as PyTorch returns them."""

    def __init__(self, nd: int, kernel: tuple[int, ...], out: tuple[int, ...],
                 draws: bool) -> None:
        self.nd, self.kernel, self.out = nd, kernel, out
        # Without given samples it draws them, so a plan draws anew at every step.
        self.draws_random = draws

    def forward(self, x: Any, samples: Any = None) -> tuple[Any, Any]:
        n, c, *size = x.shape
        if samples is None:
            samples = state.rng().random((n, c, self.nd))
        u = samples.astype(x.dtype if x.dtype.kind == "f" else np.float32, copy=False)
        # PyTorch's draws per sample and channel: in 2-D the first is the width's, in 3-D
        # the first is the depth's.
        order = (1, 0) if self.nd == 2 else (0, 1, 2)
        flat = 0
        for axis, d in enumerate(order):
            starts = _starts(u[..., d], size[axis], self.out[axis], self.kernel[axis])
            pos = _place(starts[..., None] + np.arange(self.kernel[axis]), axis, self.nd)
            flat = flat * size[axis] + pos
        flat = np.broadcast_to(flat, (n, c, *self.out, *self.kernel)).reshape(
            n, c, *self.out, -1)
        windows = np.take_along_axis(x.reshape(n, c, -1), flat.reshape(n, c, -1), 2).reshape(
            flat.shape)
        pick = np.argmax(windows, axis=-1)[..., None]
        y = np.take_along_axis(windows, pick, -1)[..., 0]
        idx = np.take_along_axis(flat, pick, -1)[..., 0]
        self.save_for_backward(idx)
        self.x_meta = (x.shape, x.dtype)
        return y, idx

    def backward(self, gy: Any, gidx: Any = None) -> tuple[Any, ...]:
        (idx,) = self.saved_tensors
        shape, dtype = self.x_meta
        n, c = shape[:2]
        gx = np.zeros((n, c, int(np.prod(shape[2:]))), dtype)
        rows = np.arange(n * c)[:, None]
        np.add.at(gx.reshape(n * c, -1), (rows, idx.reshape(n * c, -1)),
                  gy.reshape(n * c, -1))
        return (gx.reshape(shape), *[None] * (len(self.needs_input_grad) - 1))


def _place(pos: Any, axis: int, nd: int) -> Any:
    """Positions (N, C, m, k) of `axis` as (N, C, [m on its axis], [k on its axis]),
    output axes first, kernel axes after, so all axes broadcast together."""
    n, c, m, k = pos.shape
    shape = [n, c] + [1] * (2 * nd)
    shape[2 + axis], shape[2 + nd + axis] = m, k
    return pos.reshape(shape)


def _fractional(nd: int, x: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                return_indices: bool, samples: Any) -> Any:
    op = f"fractional_max_pool{nd}d"
    if x.ndim != nd + 2:  # one sample, nd + 1 dims, is unbatched's
        raise ShapeError(f"{op}: expected input of {nd + 1} or {nd + 2} dims; got shape "
                         f"{tuple(x.shape)}")
    kernel = pair(kernel_size, "kernel_size", op, nd)
    size = tuple(x.shape[2:])
    if output_size is None:
        if output_ratio is None:
            raise ValueError(f"{op} requires specifying either an output_size or an "
                             "output_ratio")
        ratio = (output_ratio,) * nd if isinstance(output_ratio, (int, float)) \
            else tuple(output_ratio)
        if not all(0 < r < 1 for r in ratio):
            raise ValueError(f"{op}: output_ratio must be between 0 and 1; got {ratio}")
        out = tuple(int(s * r) for s, r in zip(size, ratio))
    else:
        out = pair(output_size, "output_size", op, nd)
    for s, o, k in zip(size, out, kernel):
        if o + k - 1 > s:
            raise ShapeError(f"{op}: output size {out} is too large for input {size} and "
                             f"kernel {kernel}; each needs output + kernel - 1 <= input")
    pool = FractionalMaxPool(nd, kernel, out, draws=samples is None)
    y, idx = pool.apply(x) if samples is None else pool.apply(x, samples)
    idx = idx.detach()  # integers: no gradient, as PyTorch's indices
    return (y, idx) if return_indices else y


@unbatched(2)
def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Fractional max pooling over (N, C, H, W) (or (C, H, W)) input, PyTorch's: the
    output size given or `output_ratio` of the input's; `_random_samples` (N, C, 2) in
    [0, 1) place the windows (drawn from lamina's generator when not given).

    Examples:
        >>> F.fractional_max_pool2d(lm.randn(1, 2, 9, 9), 2, output_size=5).shape
        lamina.Size([1, 2, 5, 5])
    """
    return _fractional(2, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


@unbatched(3)
def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Fractional max pooling over (N, C, D, H, W) (or (C, D, H, W)) input, PyTorch's;
    `_random_samples` is (N, C, 3).

    Examples:
        >>> F.fractional_max_pool3d(lm.randn(1, 1, 6, 6, 6), 2, output_ratio=0.5).shape
        lamina.Size([1, 1, 3, 3, 3])
    """
    return _fractional(3, input, kernel_size, output_size, output_ratio, return_indices,
                       _random_samples)


@unbatched(2)
def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any,  # noqa: A002
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Any = None) -> tuple[Tensor, Tensor]:
    """fractional_max_pool2d's (output, indices), whatever return_indices says, as
    PyTorch's function of that name.

    Examples:
        >>> y, i = F.fractional_max_pool2d_with_indices(lm.randn(1, 1, 6, 6), 2, 3)
        >>> i.dtype
        dtype('int64')
    """
    return _fractional(2, input, kernel_size, output_size, output_ratio, True,
                       _random_samples)


@unbatched(3)
def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any,  # noqa: A002
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Any = None) -> tuple[Tensor, Tensor]:
    """fractional_max_pool3d's (output, indices), as PyTorch's function of that name.

    Examples:
        >>> y, i = F.fractional_max_pool3d_with_indices(lm.randn(1, 1, 4, 4, 4), 2, 2)
        >>> y.shape
        lamina.Size([1, 1, 2, 2, 2])
    """
    return _fractional(3, input, kernel_size, output_size, output_ratio, True,
                       _random_samples)
