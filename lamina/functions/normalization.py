"""Batch norm: normalisation over the batch, fused into one op whose backward is the
closed form, not a chain of ops. Layer and group norm, which normalise each sample alone,
are in lamina/functions/sample_norm.py; standardisation by fixed statistics is in
lamina/functions/feature_scaling.py."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import fused
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import channel_plane, floating, row_dots, row_sums, wants


class BatchNorm(Function):
    def __init__(self, running_mean: Any, running_var: Any, training: bool, momentum: float,
                 eps: float, num_batches_tracked: Any = None) -> None:
        self.running_mean, self.running_var = running_mean, running_var
        self.num_batches_tracked = num_batches_tracked
        self.training, self.momentum, self.eps = training, momentum, eps

    @property
    def mixes_batch(self) -> bool:
        """In training, every output depends on the whole batch through its statistics."""
        return self.training

    def forward(self, x: Any, gamma: Any = None, beta: Any = None, *, out: Any = None) -> Any:
        """out: an array of x's shape, in x's memory order, to write the result into."""
        x = floating(x)
        if x.ndim < 2:
            raise ShapeError(f"batch_norm: expected input (N, C, ...); got shape {x.shape}")
        ch = _Channels(x)
        x3 = ch.rows(x)
        compiled = fused.compiled() if self.training else None  # eval: an affine map
        if (compiled is not None and ch.first
                and fused.fits(x3, *(a for a in (gamma, beta) if a is not None))
                and x.size // ch.c > 1):
            return self._compiled_forward(compiled, x3, gamma, beta, ch, out)
        if self.training:
            n = x.size // ch.c
            if n < 2:
                raise ValueError(
                    f"batch_norm: training needs more than 1 value per channel; got input {x.shape}"
                )
            mean = ch.sums(x3) / n
            centred = x3 - ch.each(mean, x3)
            var = ch.dots(centred, centred) / n
            self._update_running(mean, var, n)
        else:
            if self.running_mean is None:
                raise ValueError("batch_norm: eval mode needs running_mean and running_var")
            return self._eval(x3, gamma, beta, ch, out)
        invstd = (1.0 / np.sqrt(var + self.eps)).astype(x.dtype, copy=False)
        xhat = np.multiply(centred, ch.each(invstd, x3), out=centred)
        self.save_for_backward(xhat, invstd, gamma)
        self.channels = ch
        out3 = _rows_of(ch, out)
        y = xhat
        if gamma is not None:
            y = np.multiply(xhat, ch.each(gamma, x3), out=out3)
            if beta is not None:
                y += ch.each(beta, x3)
        return _written(ch, y, out, out3)

    def _eval(self, x3: Any, gamma: Any, beta: Any, ch: Any, out: Any) -> Any:
        """Eval mode as PyTorch's inference kernel computes it: x * a + b, a = gamma /
        sqrt(var + eps) and b = beta - mean * a per channel, in two passes over x. The
        normalized x is made only for gamma's gradient."""
        dtype, need = x3.dtype, self.needs_input_grad
        if any(need):
            mean = self.running_mean.astype(dtype, copy=False)
            invstd = (1.0 / np.sqrt(self.running_var + self.eps)).astype(dtype, copy=False)
            xhat = None
            if wants(need, 1):
                xhat = (x3 - ch.each(mean, x3)) * ch.each(invstd, x3)
            self.save_for_backward(xhat, invstd, gamma)
            self.channels = ch
        out3 = _rows_of(ch, out)
        if ch.first and not any(need):
            y = out3 if out3 is not None and out3.flags.c_contiguous else np.empty_like(x3)
            if self.in_one_pass(x3, y, gamma, beta, relu=False):
                return _written(ch, y, out, out3)
        scale, shift = self.affine(gamma, beta, dtype)
        y = np.multiply(x3, ch.each(scale, x3), out=out3)
        y += ch.each(shift, x3)
        return _written(ch, y, out, out3)

    def affine(self, gamma: Any, beta: Any, dtype: Any) -> tuple[Any, Any]:
        """Eval mode's map x * scale + shift per channel: (scale, shift), each (C,)."""
        mean = self.running_mean.astype(dtype, copy=False)
        scale = (1.0 / np.sqrt(self.running_var + self.eps)).astype(dtype, copy=False)
        if gamma is not None:
            scale = scale * gamma
        shift = -(mean * scale)
        if beta is not None:
            shift += beta
        return scale, shift

    def in_one_pass(self, x3: Any, y: Any, gamma: Any, beta: Any, relu: bool) -> bool:
        """Eval mode's map of channel-major rows x3 (C, L) into y (may be x3), then a ReLU
        where `relu`, as one compiled pass, its scale and shift made in it too
        (numba_channels.channel_affine): at batch 1 the NumPy calls cost more than the
        passes. The same float32 steps as `affine` and NumPy's map, bit for bit. Returns
        whether it ran: numba loaded, every array float32 and C-contiguous."""
        kernels = fused.loaded()
        params = [a for a in (gamma, beta) if a is not None]
        if kernels is None or not fused.fits(x3, y, self.running_mean, self.running_var,
                                             *params):
            return False
        none = x3[0, :0]  # no gamma or beta: the kernel's ones and zeros
        kernels.channel_affine(x3, y, self.running_mean, self.running_var,
                               none if gamma is None else gamma,
                               none if beta is None else beta, self.eps, relu)
        return True

    def _compiled_forward(self, kernels: Any, x3: Any, gamma: Any, beta: Any,
                          ch: _Channels, out: Any) -> Any:
        """Training on channel-major rows (C, N*S) in one kernel (lamina.fused): the
        statistics, xhat and y in two passes over x instead of six; y into `out` (an
        execution plan's buffer) where given."""
        c, m = x3.shape
        y = None if out is None else ch.rows(out)
        if y is None or not (np.may_share_memory(y, out) and y.flags.c_contiguous):
            y = np.empty_like(x3)
        mean, var, invstd = np.empty(c), np.empty(c), np.empty(c, x3.dtype)
        g = np.ones(c, x3.dtype) if gamma is None else gamma
        b = np.zeros(c, x3.dtype) if beta is None else beta
        fused.in_rows(kernels.batch_norm, x3, g, b, self.eps, y, mean, var, invstd)
        self._update_running(mean, var, m)
        # x and the float32 mean the kernel subtracted, not xhat (see kernels.batch_norm)
        self.save_for_backward(x3, invstd, gamma, mean.astype(x3.dtype))
        self.channels = ch
        if out is None:
            return ch.restore(y)
        if not np.may_share_memory(y, out):
            np.copyto(out, ch.restore(y))
        return out

    def _update_running(self, mean: Any, var: Any, n: int) -> None:
        if self.num_batches_tracked is not None:
            self.num_batches_tracked += 1
        if self.running_mean is None:
            return
        m = self.momentum
        if m is None:  # PyTorch's cumulative average: each batch weighs the same
            m = 1.0 / float(self.num_batches_tracked) if self.num_batches_tracked else 0.0
        # PyTorch keeps the unbiased variance in running_var.
        self.running_mean *= 1 - m
        self.running_mean += m * mean
        self.running_var *= 1 - m
        self.running_var += m * var * (n / (n - 1))

    def backward(self, gy: Any) -> tuple[Any, ...]:
        xhat, invstd, gamma, *mean = self.saved_tensors  # x's rows and a mean: the kernel's
        ch, need = self.channels, self.needs_input_grad
        g3 = ch.rows(gy)
        compiled = fused.compiled() if self.training else None
        if (mean and compiled is not None and need[0] and g3.dtype == xhat.dtype):
            return self._compiled_backward(compiled, np.ascontiguousarray(g3), xhat, mean[0],
                                           invstd, gamma)
        if mean:  # the kernel's forward, without its backward: xhat from x
            xhat = (xhat - ch.each(mean[0], xhat)) * ch.each(invstd, xhat)
        batch_stats = need[0] and self.training
        gy_xhat = ch.dots(g3, xhat) if batch_stats or wants(need, 1) else None
        gy_sum = ch.sums(g3) if batch_stats or wants(need, 2) else None
        gx = None
        if need[0]:
            scale = invstd if gamma is None else invstd * gamma
            gx = g3 * ch.each(scale, g3)
            if self.training:  # batch statistics (Ioffe & Szegedy, 2015): the closed form
                # invstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)), gxhat = gamma*gy
                n = gy.size // ch.c
                gx -= ch.each(scale * gy_sum / n, g3)
                drift = xhat * ch.each(scale * gy_xhat / n, g3)
                gx -= drift
            gx = ch.restore(gx)
        return (gx, *(g if wanted else None for g, wanted in zip((gy_xhat, gy_sum), need[1:])))

    def _compiled_backward(self, kernels: Any, g3: Any, x3: Any, mean: Any, invstd: Any,
                           gamma: Any) -> tuple[Any, ...]:
        """The batch-statistics backward on channel-major rows in one kernel: both sums
        in one pass, gx in another, xhat made again from x as each reads it."""
        c = len(x3)
        gx = np.empty_like(g3)
        g_xhat, g_sum = np.empty(c), np.empty(c)
        scale = invstd if gamma is None else invstd * gamma
        fused.in_rows(kernels.batch_norm_backward, g3, x3, mean, invstd, scale, gx, g_xhat,
                      g_sum)
        need = self.needs_input_grad
        grads = (g_xhat.astype(g3.dtype), g_sum.astype(g3.dtype))
        return (self.channels.restore(gx),
                *(g if wanted else None for g, wanted in zip(grads, need[1:])))


class _Channels:
    """An (N, C, ...) array's elements as rows that share a channel, without a copy where
    its memory allows: (C, N*S) rows for channel-major memory (as convolutions write),
    else (N, C, S). Per-channel sums are BLAS products with ones, and a per-channel
    factor is laid out to broadcast along whole rows: NumPy pays a fixed cost for each
    row it broadcasts a factor along, so (N, C, 1) against rows of H*W is slower than a
    (C, H*W) plane against whole samples."""

    def __init__(self, x: Any) -> None:
        self.shape, self.c = x.shape, x.shape[1]
        self.first = x.ndim > 2 and (x.shape[0] == 1 or not x.flags.c_contiguous) \
            and x.swapaxes(0, 1).flags.c_contiguous

    def rows(self, a: Any) -> Any:
        n, c = self.shape[:2]
        if self.first:
            return a.swapaxes(0, 1).reshape(c, n * (a.size // max(n * c, 1)))
        return a.reshape(n, c, a.size // max(n * c, 1))

    def restore(self, a3: Any) -> Any:
        if self.first:
            return a3.reshape(self.c, self.shape[0], *self.shape[2:]).swapaxes(0, 1)
        return a3.reshape(self.shape)

    def sums(self, a3: Any) -> Any:
        return row_sums(a3) if self.first else row_sums(a3).sum(axis=0)

    def dots(self, a3: Any, b3: Any) -> Any:
        return row_dots(a3, b3) if self.first else row_dots(a3, b3).sum(axis=0)

    def each(self, per_channel: Any, like: Any) -> Any:
        """per_channel (C,) laid out to broadcast against rows shaped like `like`."""
        if self.first:
            return per_channel.astype(like.dtype, copy=False)[:, None]
        return channel_plane(per_channel, like)


def batch_norm(input: Tensor, running_mean: Any, running_var: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5, *, num_batches_tracked: Any = None) -> Tensor:
    """Normalise each channel of the input, then scale by weight and shift by bias:
    PyTorch's function, its arguments in its order.

    Args:
        input: (N, C) or (N, C, *spatial).
        running_mean, running_var: arrays or tensors of shape (C,), updated in place when
            training (running_var holds the unbiased variance, as in PyTorch); used for
            normalisation when not training. May be None when training.
        weight, bias: optional affine parameters of shape (C,).
        training: use batch statistics (True) or the running ones (False, the default).
        momentum: weight of the new batch in the running averages.
        eps: added to the variance for numerical stability.
        num_batches_tracked: lamina's: an optional 0-d integer array (or tensor)
            incremented in place at each training call, as the layer's buffer of that name
            counts (the count then lives in the op, so execution plans keep it).

    Returns:
        A tensor of the input's shape.

    Examples:
        >>> F.batch_norm(lm.tensor([[1.0], [3.0]]), None, None, training=True).tolist()
        [[-0.9999950000374997], [0.9999950000374997]]
    """
    rm = running_mean.array if isinstance(running_mean, Tensor) else running_mean
    rv = running_var.array if isinstance(running_var, Tensor) else running_var
    nbt = getattr(num_batches_tracked, "array", num_batches_tracked)
    fn = BatchNorm(rm, rv, training, momentum, eps, nbt)
    if weight is None and bias is None:
        return fn.apply(input)
    if bias is None:
        return fn.apply(input, weight)
    if weight is None:  # a shift alone: scale by ones, which take no gradient
        weight = Tensor(np.ones(bias.shape, bias.dtype))
    return fn.apply(input, weight, bias)


def _rows_of(ch: Any, out: Any) -> Any:
    """out (a plan's buffer, or None) as the (N, C, positions) rows a result is written
    into; None where rows() would copy it (the result is written over afterwards)."""
    out3 = None if out is None else ch.rows(out)
    return out3 if out3 is None or np.may_share_memory(out3, out) else None


def _written(ch: Any, y: Any, out: Any, out3: Any) -> Any:
    """The output from rows y: out where given (y copied in unless written there)."""
    if out is None:
        return ch.restore(y)
    if y is not out3:
        np.copyto(out, ch.restore(y))
    return out
