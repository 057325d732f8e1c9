"""Normalisation of each sample alone, never mixing a batch: layer norm over its last
axes, group norm over its channel groups. Each is fused: one op whose backward is the
closed form, not a chain of ops. Batch norm is in lamina/functions/normalization.py."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina import fused
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import channel_plane, column_sums, floating, row_dots, row_sums, wants


class LayerNorm(Function):
    """Normalise each sample over its last axes; per sample, so it never mixes a batch.

    The compiled kernels keep x and each row's mean and 1 / std, as PyTorch's kernel does,
    and the backward makes xhat again as it reads x: the forward is bound by its stores,
    and xhat would be a second array to write. NumPy's passes keep xhat, which they make
    anyway."""

    def __init__(self, normalized_shape: tuple[int, ...], eps: float) -> None:
        self.normalized_shape, self.eps = normalized_shape, eps

    def forward(self, x: Any, weight: Any = None, bias: Any = None) -> Any:
        x = floating(x)
        shape, k = self.normalized_shape, len(self.normalized_shape)
        if x.ndim < k or x.shape[x.ndim - k:] != shape:
            raise ShapeError(f"layer_norm: expected input (..., {', '.join(map(str, shape))}) "
                             f"to normalise over its last {k} axes; got shape {x.shape}")
        for name, p in (("weight", weight), ("bias", bias)):
            if p is not None and p.shape != shape:
                raise ShapeError(f"layer_norm: {name} must have the normalised shape {shape}; "
                                 f"got {p.shape}")
        d = math.prod(shape)
        rows = x.reshape(math.prod(x.shape[:x.ndim - k]), d)  # a copy only if x is strided
        compiled = fused.compiled()
        if compiled is not None and fused.fits(rows, *(a for a in (weight, bias) if a is not None)):
            w = np.ones(d, rows.dtype) if weight is None else weight.reshape(-1)
            b = np.zeros(d, rows.dtype) if bias is None else bias.reshape(-1)
            y, mean, invstd = fused.layer_norm(compiled, rows, w, b, self.eps)
            self.save_for_backward(rows, mean, invstd, weight)
            return y.reshape(x.shape)
        centred = rows - (row_sums(rows) / d)[:, None]
        var = row_dots(centred, centred) / d
        invstd = (1.0 / np.sqrt(var + self.eps)).astype(x.dtype, copy=False)[:, None]
        xhat = np.multiply(centred, invstd, out=centred)
        self.save_for_backward(xhat, invstd, weight)
        if weight is None:
            return xhat.reshape(x.shape)
        y = xhat * weight.reshape(-1)
        if bias is not None:
            y += bias.reshape(-1)
        return y.reshape(x.shape)

    def backward(self, gy: Any) -> tuple[Any, ...]:
        if len(self.saved_tensors) == 3:  # NumPy's forward
            xhat, invstd, weight = self.saved_tensors
            return self._backward(gy, xhat, invstd, weight)
        rows, mean, invstd, weight = self.saved_tensors
        need, d = self.needs_input_grad, rows.shape[1]
        g2 = gy.reshape(rows.shape)
        compiled = fused.compiled()
        if compiled is not None and g2.dtype == rows.dtype:
            w = np.ones(d, g2.dtype) if weight is None else weight.reshape(-1)
            gx, gw, gb = fused.layer_norm_backward(compiled, np.ascontiguousarray(g2), rows,
                                                   mean, invstd, w)
            shape = self.normalized_shape
            grads = [gx.reshape(gy.shape) if need[0] else None,
                     gw.reshape(shape) if wants(need, 1) else None,
                     gb.reshape(shape) if wants(need, 2) else None]
            return tuple(grads[:len(need)])
        # The kernels made the forward, but do not run now (set_backend since).
        return self._backward(gy, (rows - mean[:, None]) * invstd[:, None], invstd[:, None],
                              weight)

    def _backward(self, gy: Any, xhat: Any, invstd: Any, weight: Any) -> tuple[Any, ...]:
        """NumPy's passes, from xhat and invstd (R, 1)."""
        need, d = self.needs_input_grad, xhat.shape[1]
        g2 = gy.reshape(xhat.shape)
        scale = weight.reshape(-1) if weight is not None else np.ones(d, g2.dtype)
        prod = np.multiply(g2, xhat) if need[0] or wants(need, 1) else None
        grads: list[Any] = [None]
        if len(need) > 1:
            grads.append(column_sums(prod).reshape(self.normalized_shape) if need[1] else None)
        if len(need) > 2:
            grads.append(column_sums(g2).reshape(self.normalized_shape) if need[2] else None)
        if need[0]:  # invstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)) per row,
            # gxhat = gy * weight
            mean_g, mean_gx = (g2 @ scale) / d, (prod @ scale) / d
            gx = g2 * scale
            gx *= invstd
            gx -= (mean_g * invstd[:, 0])[:, None]
            gx -= np.multiply(xhat, (mean_gx * invstd[:, 0])[:, None], out=prod)
            grads[0] = gx.reshape(gy.shape)
        return tuple(grads)


def layer_norm(x: Tensor, normalized_shape: int | tuple[int, ...], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each sample over its last axes to zero mean and unit (biased) variance,
    then scale by weight and shift by bias, as PyTorch's `layer_norm`.

    Args:
        x: input of shape (..., *normalized_shape).
        normalized_shape: the trailing shape to normalise over (an int for the last axis).
        weight, bias: optional affine parameters of shape normalized_shape.
        eps: added to the variance for numerical stability.

    Returns:
        A tensor of x's shape.
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    fn = LayerNorm(shape, eps)
    if weight is None and bias is None:
        return fn.apply(x)
    if weight is None:
        raise ValueError("layer_norm: bias without weight is not supported; pass both or neither")
    return fn.apply(x, weight) if bias is None else fn.apply(x, weight, bias)


def rms_norm(input: Tensor, normalized_shape: int | tuple[int, ...],  # noqa: A002
             weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """input / sqrt(mean(input**2) + eps) over its trailing `normalized_shape` axes, times
    `weight`, as PyTorch's `rms_norm` (eps: the dtype's machine epsilon where None).

    Examples:
        >>> F.rms_norm(lm.tensor([[3.0, 4.0]]), 2) * (12.5 ** 0.5)
        tensor([[3., 4.]])
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"rms_norm: the input's last dims must be normalized_shape "
                           f"{shape}; got input of shape {tuple(input.shape)}")
    eps = float(np.finfo(input.dtype).eps) if eps is None else eps
    axes = tuple(range(input.ndim - len(shape), input.ndim))
    out = input * ((input * input).mean(axes, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def group_norm(x: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each sample's channels in `num_groups` groups, each over its channels and
    positions together, then scale and shift per channel, as PyTorch's `group_norm`. Per
    sample, so it never mixes a batch (small batches train as well as large ones).

    Args:
        x: input of shape (N, C, *), C a multiple of num_groups.
        num_groups: how many groups the C channels form (1: over the whole sample, as
            layer norm; C: each channel alone, as instance norm).
        weight, bias: optional per-channel affine parameters of shape (C,).
        eps: added to the variance for numerical stability.

    Examples:
        >>> y = F.group_norm(x, 8, w, b)     # x (4, 32, 16, 16): 8 groups of 4 channels
    """
    if x.ndim < 2 or not isinstance(num_groups, int) or num_groups < 1 \
            or x.shape[1] % num_groups:
        raise ShapeError(f"group_norm: expected input (N, C, ...) with C a multiple of "
                         f"num_groups={num_groups!r}; got shape {tuple(x.shape)}")
    c = x.shape[1]
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.shape != (c,):
            raise ShapeError(f"group_norm: {name} must hold one value per channel, shape "
                             f"({c},); got {tuple(p.shape)}")
    if bias is not None and weight is None:
        raise ValueError("group_norm: bias without weight is not supported; pass both or neither")
    fn = GroupNorm(num_groups, eps)
    if weight is None:
        return fn.apply(x)
    return fn.apply(x, weight) if bias is None else fn.apply(x, weight, bias)


class GroupNorm(Function):
    """Layer norm over each sample's channel groups, then a per-channel affine, as one op:
    as a chain (reshape, layer norm, scale, shift) it makes more passes over the input.

    Every pass over the input is one NumPy call over rows as long as they can be: a
    group's positions, or a whole sample against a per-channel plane. A per-channel
    factor broadcast along rows of H*W costs NumPy a fixed amount a row, which makes a
    (N, C, 1) product slower than the same product against a (C, H*W) plane. Sums and dot
    products per row are BLAS matrix-vector products."""

    def __init__(self, groups: int, eps: float) -> None:
        self.groups, self.eps = groups, eps

    def forward(self, x: Any, weight: Any = None, bias: Any = None) -> Any:
        x = floating(x)
        n, c, s = x.shape[0], x.shape[1], math.prod(x.shape[2:])
        k = c // self.groups * s  # not -1: an empty batch has no size to divide
        xg = x.reshape(n, self.groups, k)
        centred = xg - row_sums(xg)[..., None] / k
        var = row_dots(centred, centred) / k
        invstd = (1.0 / np.sqrt(var + self.eps)).astype(x.dtype, copy=False)[..., None]
        xhat = np.multiply(centred, invstd, out=centred).reshape(n, c, s)
        self.save_for_backward(xhat, invstd, weight)
        if weight is None:
            return xhat.reshape(x.shape)
        y = xhat * channel_plane(weight, xhat)
        if bias is not None:
            y += channel_plane(bias, xhat)
        return y.reshape(x.shape)

    def backward(self, gy: Any) -> tuple[Any, ...]:
        xhat, invstd, weight = self.saved_tensors
        need = self.needs_input_grad
        g3 = gy.reshape(xhat.shape)
        gy_xhat = row_dots(g3, xhat)  # (N, C): per sample, the scale's gradient
        gy_sum = row_sums(g3)
        grads = [None]
        if need[0]:
            gx = self._input_grad(g3, xhat, invstd, weight, gy_xhat, gy_sum)
            grads[0] = gx.reshape(gy.shape)
        if len(need) > 1:
            grads.append(gy_xhat.sum(axis=0) if need[1] else None)
        if len(need) > 2:
            grads.append(gy_sum.sum(axis=0) if need[2] else None)
        return tuple(grads)

    def _input_grad(self, g3: Any, xhat: Any, invstd: Any, weight: Any, gy_xhat: Any,
                    gy_sum: Any) -> Any:
        """invstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)) over each group, with
        gxhat = gy * weight; the two means per group come from the per-channel sums."""
        n, c, s = g3.shape
        groups = self.groups
        gxhat = g3 * channel_plane(weight, g3) if weight is not None else g3.copy()
        if weight is not None:
            gy_sum, gy_xhat = gy_sum * weight, gy_xhat * weight
        per, count = c // groups, c // groups * s
        mean_g = gy_sum.reshape(n, groups, per).sum(axis=2, keepdims=True) / count
        mean_gx = gy_xhat.reshape(n, groups, per).sum(axis=2, keepdims=True) / count
        gx = gxhat.reshape(n, groups, count)
        gx -= mean_g.astype(gx.dtype, copy=False)
        drift = xhat.reshape(gx.shape) * mean_gx.astype(gx.dtype, copy=False)
        gx -= drift
        gx *= invstd
        return gx
