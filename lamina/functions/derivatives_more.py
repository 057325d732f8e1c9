"""Differentiable backward rules of the ops transformers and generators add: attention's
softmax, einsum, embedding, the dropouts, transposed convolution, logsumexp and
logcumsumexp, 3-D and fractional max pooling, and the linear ops among interpolation,
cumsum, scatter and index_add (see lamina.functions.derivatives for what a rule is)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.higher_order import adjoint, derivative, linear_op, opaque, output
from lamina.autograd.tensor import Tensor
from lamina.functions import array, spatial
from lamina.functions import axis_reductions as red
from lamina.functions import product as mm
from lamina.functions import unary as un
from lamina.functions.activation_more import GumbelNoise, RandomSlopes
from lamina.functions.attention import AttentionSoftmax
from lamina.functions.connection import Embedding
from lamina.functions.conv_transpose import ConvTranspose
from lamina.functions.derivatives import constant
from lamina.functions.derivatives_layers import through
from lamina.functions.fractional_pool import FractionalMaxPool
from lamina.functions.indexing import IndexAdd, IndexFill, Scatter
from lamina.functions.linalg import Einsum
from lamina.functions.noise import AlphaDropout, ChannelDropout, Dropout, FeatureAlphaDropout
from lamina.functions.operands import cast
from lamina.functions.pieces import RepeatInterleave
from lamina.functions.reduction import CumSum, LogSumExp
from lamina.functions.resample import Interpolate
from lamina.functions.scatter_reduce import LogCumSumExp
from lamina.functions.volume import WindowMax


@derivative(AttentionSoftmax)
def _attention_softmax(f: Any, gy: Tensor) -> Tensor:
    """softmax(x * scale + mask): softmax's gradient, times the scale."""
    y = output(f, f.saved_tensors[0])
    gz = y * gy
    return (gz - y * red.sum(gz, -1, keepdims=True)) * f.scale


@derivative(Dropout, ChannelDropout, AlphaDropout, FeatureAlphaDropout)
def _dropout(f: Any, gy: Tensor) -> Tensor:
    return gy * constant(f.mask, gy)  # the mask drawn in forward, not a new one


@derivative(RandomSlopes)
def _random_slopes(f: Any, gy: Tensor) -> Tensor:
    return gy * constant(f.factor, gy)  # rrelu's slopes as drawn in forward


@derivative(GumbelNoise)
def _gumbel_noise(f: Any, gy: Tensor) -> Tensor:
    return gy


@derivative(Embedding)
def _embedding(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """Linear in the table: its backward's adjoint is the lookup. With padding_idx or
    scale_grad_by_freq the backward is not the lookup's transpose; those first gradients
    stay right, and differentiating them again raises."""
    if f.padding_idx is None and not f.scale_grad_by_freq:
        return adjoint(f, gy)
    return opaque(f, [gy])


@derivative(LogSumExp)
def _logsumexp(f: Any, gy: Tensor) -> Tensor:
    x = f.inputs[0]
    y = LogSumExp(f.axes, True).apply(x)
    if not f.keepdims:
        gy = array.reshape(gy, tuple(y.shape))
    return gy * un.exp(x - y)


@derivative(ConvTranspose)
def _conv_transpose(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """A transposed convolution as a product per group and fold (col2im), differentiated."""
    def build(x: Tensor, W: Tensor, b: Any = None) -> Tensor:
        if f.nd == 1:
            x, W = x.unsqueeze(2), W.unsqueeze(2)
        (n, c, h, w), (og, kh, kw), g = x.shape, W.shape[1:], f.groups
        s, d, p, q = f.stride, f.dilation, f.padding, f.output_padding
        out = [(i - 1) * si + di * (k - 1) + 1 + qi - 2 * pi
               for i, si, di, k, qi, pi in zip((h, w), s, d, (kh, kw), q, p)]
        rows = array.reshape(x, (n, c, h * w))
        parts = [mm.matmul(array.reshape(W[i * (c // g):(i + 1) * (c // g)],
                                        (c // g, og * kh * kw)).transpose(0, 1),
                          rows[:, i * (c // g):(i + 1) * (c // g)]) for i in range(g)]
        cols = parts[0] if g == 1 else array.concat(parts, 1)  # channel-major, as fold reads
        y = spatial.fold(cols, tuple(out), (kh, kw), d, p, s)
        if b is not None:
            y = y + array.reshape(b, (g * og, 1, 1))
        return y[:, :, 0, :] if f.nd == 1 else y
    return through(f, (gy,), build)


@derivative(Einsum)
def _einsum(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """Each operand's gradient is the einsum of the output's gradient with the others,
    broadcast along the letters only that operand has (as Einsum.backward computes it)."""
    grads: list[Any] = []
    for k, (sub, x) in enumerate(zip(f.subs, f.inputs)):
        if not f.needs_input_grad[k]:
            grads.append(None)
            continue
        others = [(s, v) for j, (s, v) in enumerate(zip(f.subs, f.inputs)) if j != k]
        present = set(f.out).union(*[set(s) for s, _ in others])
        kept = "".join(c for c in dict.fromkeys(sub) if c in present)
        g = Einsum([f.out] + [s for s, _ in others], kept).apply(gy, *[v for _, v in others])
        g = array.reshape(g, tuple(n if c in kept else 1 for c, n in zip(sub, x.shape)))
        grads.append(cast(array.broadcast_to(g, tuple(x.shape)), x.dtype))
    return tuple(grads)


linear_op(Interpolate, CumSum, Scatter, IndexAdd, IndexFill, RepeatInterleave)


@derivative(WindowMax)
def _window_max(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """The picked element of each window (3-D max pooling's), a gather: linear in the
    cells, its routing fixed."""
    def build(cells: Tensor) -> Tensor:
        return cells.gather(2, Tensor(f.pick[:, :, None].astype(np.int64))).squeeze(2)
    return through(f, (gy,), build)


@derivative(FractionalMaxPool)
def _fractional_max_pool(f: Any, gy: Tensor, gidx: Any = None) -> tuple[Any, ...]:
    (idx,) = f.saved_tensors

    def build(x: Tensor, samples: Any = None) -> Tensor:
        n, c = x.shape[:2]
        flat = x.reshape(n, c, -1).gather(2, Tensor(idx.reshape(n, c, -1)))
        return flat.reshape(tuple(gy.shape))
    return through(f, (gy,), build)


@derivative(LogCumSumExp)
def _logcumsumexp(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """log(cumsum(exp(x - m))) + m, m each slice's maximum (a constant: the value does
    not depend on it)."""
    def build(x: Tensor) -> Tensor:
        top = np.max(x.array, axis=f.axis, keepdims=True)
        top = constant(np.where(np.isfinite(top), top, 0), x)
        return un.log(CumSum(f.axis).apply(un.exp(x - top))) + top
    return through(f, (gy,), build)
