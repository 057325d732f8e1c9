"""Differentiable backward rules of the activations, layers and losses (see
lamina.functions.derivatives, whose helpers they use), and the linear ops marked as such:
each differentiates itself (lamina.autograd.higher_order)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.engine import grad
from lamina.autograd.higher_order import derivative, linear_op, output, placed
from lamina.autograd.tensor import Tensor
from lamina.functions import activation as act
from lamina.functions import (
    activation_gelu,
    adaptive_pool,
    array,
    diagonals,
    indexing,
    loss,
    loss_pointwise,
    padding,
    pieces,
    pooling,
    spatial,
)
from lamina.functions import activation_softmax as asm
from lamina.functions import axis_reductions as red
from lamina.functions import math as m
from lamina.functions import product as mm
from lamina.functions import unary as un
from lamina.functions.connection import Linear
from lamina.functions.conv import Conv
from lamina.functions.derivatives import constant
from lamina.functions.elementwise import unary
from lamina.functions.normalization import BatchNorm
from lamina.functions.operands import AsType, cast
from lamina.functions.reduction import Norm
from lamina.functions.sample_norm import GroupNorm, LayerNorm

# -- activations ---------------------------------------------------------------------------


@derivative(act.ReLU)
def _relu(f: Any, gy: Tensor) -> Tensor:
    kept = f.saved_tensors[0]  # the output, or its mask where a plan keeps that
    return gy * constant(kept if kept.dtype == bool else kept > 0, gy)


@derivative(act.LeakyReLU)
def _leaky_relu(f: Any, gy: Tensor) -> Tensor:
    return gy * constant(np.where(f.inputs[0].array > 0, 1.0, f.slope), gy)


@derivative(act.ELU)
def _elu(f: Any, gy: Tensor) -> Tensor:
    x = f.inputs[0]
    positive = x.array > 0
    slope = m.where(positive, constant(1, x), f.alpha * un.exp(un.clip(x, None, 0)))
    return gy * slope


@derivative(act.Sigmoid)
def _sigmoid(f: Any, gy: Tensor) -> Tensor:
    s = output(f, f.saved_tensors[0])
    return gy * s * (1 - s)


@derivative(act.SiLU)
def _silu(f: Any, gy: Tensor) -> Tensor:
    x = f.inputs[0]
    s = act.Sigmoid().apply(x)
    return gy * s * (1 + x * (1 - s))


@derivative(act.Tanh)
def _tanh(f: Any, gy: Tensor) -> Tensor:
    t = output(f, f.saved_tensors[0])
    return gy * (1 - t * t)


@derivative(act.Softplus)
def _softplus(f: Any, gy: Tensor) -> Tensor:
    slope = act.Sigmoid().apply(f.inputs[0])
    if f.threshold is not None:  # past the threshold, the identity's slope
        linear = f.inputs[0].array > f.threshold
        slope = slope * Tensor((~linear).astype(slope.dtype)) + Tensor(
            linear.astype(slope.dtype))
    return gy * slope


@derivative(activation_gelu.GELU)
def _gelu(f: Any, gy: Tensor) -> Tensor:
    x = cast(f.inputs[0], gy.dtype)
    if f.approximate == "tanh":  # d/dx x (1 + t) / 2, t = tanh(k (x + a x^3))
        k, a = math.sqrt(2 / math.pi), 0.044715
        t = act.Tanh().apply(k * (x + a * m.PowScalar(3).apply(x)))
        return gy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * a * x * x))
    phi = unary("erf", x * (1 / math.sqrt(2))) * 0.5 + 0.5  # d/dx x Phi(x) = Phi + x phi
    return gy * (phi + x * un.exp(x * x * -0.5) * (1 / math.sqrt(2 * math.pi)))


@derivative(asm.Softmax)
def _softmax(f: Any, gy: Tensor) -> Tensor:
    y = output(f, f.saved_tensors[0])
    gx = y * gy
    return gx - y * red.sum(gx, f.axis, keepdims=True)


@derivative(asm.LogSoftmax)
def _log_softmax(f: Any, gy: Tensor) -> Tensor:
    y = un.exp(output(f, f.saved_tensors[0]))
    return gy - y * red.sum(gy, f.axis, keepdims=True)


# -- layers and losses ---------------------------------------------------------------------


@derivative(Linear)
def _linear(f: Any, gy: Tensor) -> tuple[Any, ...]:
    x, W = f.inputs[:2]
    need = f.needs_input_grad
    rows = array.reshape(gy, (-1, gy.shape[-1]))
    gx = mm.matmul(gy, W) if need[0] else None
    gW = (mm.matmul(rows.transpose(0, 1), array.reshape(x, (-1, x.shape[-1])))
          if need[1] else None)
    if len(need) == 2:
        return gx, gW
    return gx, gW, red.sum(rows, 0) if need[2] else None


@derivative(loss.CrossEntropy)
def _cross_entropy(f: Any, gy: Tensor) -> tuple[Any, None]:
    """d(loss)/d(log-probabilities) is a constant G (the picked classes' weights, the
    smoothing's spread), so the gradient is log-softmax's backward of G * gy."""
    x = f.inputs[0]
    n_rows, c = f.t.size, x.shape[1]
    e, rows = f.smoothing, np.arange(n_rows)
    row_weight, valid = f.weights(x.dtype)
    g = np.zeros((n_rows, c), x.dtype)
    g[rows, f.t] -= (1 - e) * row_weight
    if e:
        w = f._class_weight(x.dtype)
        g -= (e / c) * valid[:, None] * (1 if w is None else w)
    ones = np.ones(f.labels_shape if f.reduction == "none" else (), x.dtype)
    gl = f.scatter(g, ones)  # laid out like x, divided by the count for 'mean'
    if f.reduction == "none":
        gy = array.reshape(gy, (gy.shape[0], 1, *gy.shape[1:]))
    h = constant(gl, x) * gy
    y = asm.Softmax(1).apply(x)
    return h - y * red.sum(h, 1, keepdims=True), None


@derivative(Norm)
def _norm(f: Any, gy: Tensor) -> Tensor:
    """x / |x| (0 where the norm is 0), from the norm recomputed."""
    x = f.inputs[0]
    y = type(f)(f.axes, True).apply(x)
    zero = y.array == 0
    safe = m.where(zero, constant(1, y), y)
    if not f.keepdims:
        gy = array.reshape(gy, y.shape)
    return m.where(zero, constant(0, x), x / safe) * gy


def through(f: Any, gys: tuple[Tensor, ...], build: Any) -> tuple[Any, ...]:
    """f's input gradients as those of `build`, f's forward written in differentiable ops
    and run again on f's inputs: for a fused op, whose derivative is its parts'. The walk
    stops at f's inputs, so nothing before them is visited."""
    need = [i for i, x in enumerate(f.inputs) if f.needs_input_grad[i]]
    out = build(*f.inputs)
    outs = list(out) if isinstance(out, tuple) else [out]
    stop = {x.creator for x in f.inputs if x.creator is not None}
    got = grad(outs, [f.inputs[i] for i in need], list(gys[:len(outs)]), create_graph=True,
               allow_unused=True, materialize_grads=True, stop=stop)
    return placed(len(f.inputs), need, got)


def _normalized(x: Tensor, axes: tuple[int, ...], eps: float) -> Tensor:
    centred = x - red.mean(x, axes, keepdims=True)
    var = red.mean(centred * centred, axes, keepdims=True)
    return centred / un.sqrt(var + eps)


@derivative(LayerNorm)
def _layer_norm(f: Any, gy: Tensor) -> tuple[Any, ...]:
    def build(x: Tensor, weight: Any = None, bias: Any = None) -> Tensor:
        k = len(f.normalized_shape)
        y = _normalized(x, tuple(range(x.ndim - k, x.ndim)), f.eps)
        y = y if weight is None else y * weight
        return y if bias is None else y + bias
    return through(f, (gy,), build)


@derivative(GroupNorm)
def _group_norm(f: Any, gy: Tensor) -> tuple[Any, ...]:
    def build(x: Tensor, weight: Any = None, bias: Any = None) -> Tensor:
        n, c = x.shape[:2]
        y = array.reshape(_normalized(array.reshape(x, (n, f.groups, -1)), (2,), f.eps),
                          tuple(x.shape))
        plane = (c,) + (1,) * (x.ndim - 2)
        y = y if weight is None else y * array.reshape(weight, plane)
        return y if bias is None else y + array.reshape(bias, plane)
    return through(f, (gy,), build)


@derivative(loss_pointwise.BCEWithLogits)
def _bce_with_logits(f: Any, gy: Tensor) -> tuple[Any, ...]:
    def build(x: Tensor, y: Tensor) -> Tensor:
        losses = act.Softplus().apply(x) - x * y
        if f.reduction == "none":
            return losses
        return red.mean(losses) if f.reduction == "mean" else red.sum(losses)
    return through(f, (gy,), build)


@derivative(BatchNorm)
def _batch_norm(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """Training: normalised by the batch's statistics, which depend on x; eval: by the
    running ones, constants. The running statistics are not updated again."""
    def build(x: Tensor, gamma: Any = None, beta: Any = None) -> Tensor:
        plane = (x.shape[1],) + (1,) * (x.ndim - 2)
        if f.training:
            y = _normalized(x, (0, *range(2, x.ndim)), f.eps)
        else:
            mean, var = (np.asarray(getattr(a, "array", a)).reshape(plane)
                         for a in (f.running_mean, f.running_var))
            y = (x - constant(mean, x)) / constant(np.sqrt(var + f.eps), x)
        y = y if gamma is None else y * array.reshape(gamma, plane)
        return y if beta is None else y + array.reshape(beta, plane)
    return through(f, (gy,), build)


@derivative(pooling.MaxPool)
def _max_pool(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """Max pooling as the sum, over kernel offsets, of each offset's strided slice of x
    times where that offset held the window's maximum: the same function near x, made of
    linear ops, so its gradient is recorded and routes as the pooling's did."""
    (kh, kw), (sh, sw), (ph, pw) = f.k, f.s, f.p
    oh, ow = f.out_hw
    idx = f.idx

    def build(x: Tensor) -> Tensor:
        x4 = x.unsqueeze(2) if f.nd == 1 else x
        xp = padding.pad(x4, (pw, pw, ph, ph)) if ph or pw else x4
        y = None
        for k in range(kh * kw):
            i, j = divmod(k, kw)
            plane = xp[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
            term = plane * constant(idx == k, x)
            y = term if y is None else y + term
        return y[:, :, 0, :] if f.nd == 1 else y
    return through(f, (gy,), build)


@derivative(Conv)
def _conv(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """A convolution as im2col (unfold) and a product per group, differentiated."""
    oh, ow = f.meta[2]

    def build(x: Tensor, W: Tensor, b: Any = None) -> Tensor:
        if f.nd == 1:
            x, W = x.unsqueeze(2), W.unsqueeze(2)
        n, o, g = x.shape[0], W.shape[0], f.groups
        cols = spatial.unfold(x, tuple(W.shape[2:]), f.dilation, f.padding, f.stride)
        width = cols.shape[1] // g
        parts = [mm.matmul(array.reshape(W[i * (o // g):(i + 1) * (o // g)], (o // g, -1)),
                          cols[:, i * width:(i + 1) * width]) for i in range(g)]
        y = array.reshape(parts[0] if g == 1 else array.concat(parts, 1), (n, o, oh, ow))
        if b is not None:
            y = y + array.reshape(b, (o, 1, 1))
        return y[:, :, 0, :] if f.nd == 1 else y
    return through(f, (gy,), build)


linear_op(array.Reshape, array.Transpose, array.BroadcastTo, array.GetItem, array.Concat,
          array.Stack, array.Split, array.Unbind, padding.Pad, AsType, loss.NLL,
          pieces.Tile, pieces.Roll, indexing.Gather, indexing.IndexSelect,
          diagonals.Diagonal, diagonals.Triangle, diagonals.DiagEmbed, spatial._Unfold,
          spatial._Fold, pooling.AvgPool, adaptive_pool.AdaptiveAvgPool)
