"""The op case table: one entry per (function, shape) with a NumPy reference.

Adding an op is adding entries here (the losses' in op_cases_losses.py);
tests/functions/test_functions.py and tests/functions/test_torch_crosscheck.py cross every entry with their
generic checks.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from op_cases_losses import LOSS_CASES
from op_cases_tensor import TENSOR_CASES
from op_table import Case, away_from_zero, inputs, positive, randn
from op_table import np_sigmoid as _np_sigmoid
from op_table import np_softmax as _np_softmax
from op_table import torch_module as _t

import lamina.functions as F

# Scalars, size-1 axes and broadcasting pairs for the elementwise binary ops.
BROADCAST_PAIRS = [
    ((), ()),
    ((3,), ()),
    ((), (3,)),
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((2, 1, 3), (4, 1)),
    ((1,), (2, 3)),
    ((2, 1), (1, 3)),
]
UNARY_SHAPES = [(), (1,), (3,), (2, 1, 3)]

CASES: list[Case] = []


def binary(name: str, fn, ref, torch_fn, make_a=randn, make_b=randn, **kw) -> None:
    for sa, sb in BROADCAST_PAIRS:
        CASES.append(Case(f"{name}{sa}{sb}", fn, ref, inputs(make_a(*sa), make_b(*sb)),
                          torch_fn, **kw))


def unary(name: str, fn, ref, torch_fn, make=randn, **kw) -> None:
    for s in UNARY_SHAPES:
        CASES.append(Case(f"{name}{s}", fn, ref, inputs(make(*s)), torch_fn, **kw))


# -- math ------------------------------------------------------------------------------
binary("add", lambda a, b: a + b, np.add, lambda a, b: a + b)
binary("sub", lambda a, b: a - b, np.subtract, lambda a, b: a - b)
binary("mul", lambda a, b: a * b, np.multiply, lambda a, b: a * b)
binary("div", lambda a, b: a / b, np.divide, lambda a, b: a / b, make_b=positive)
binary("pow", lambda a, b: a**b, np.power, lambda a, b: a**b, make_a=positive)
binary("maximum", F.maximum, np.maximum, lambda a, b: a.maximum(b))
binary("minimum", F.minimum, np.minimum, lambda a, b: a.minimum(b))
for sc, sa, sb in [((2, 3), (2, 3), (2, 3)), ((2, 3), (3,), ()), ((2, 1), (1, 3), (2, 3)),
                   ((), (2,), (2,))]:
    CASES.append(Case(f"where{sc}{sa}{sb}", F.where, np.where,
                      inputs(lambda rng, s=sc: rng.random(s) < 0.5, randn(*sa), randn(*sb)),
                      lambda c, a, b: _t().where(c, a, b)))
unary("neg", lambda x: -x, np.negative, lambda x: -x)
unary("pow_scalar3", lambda x: x**3, lambda x: x**3, lambda x: x**3)
unary("pow_scalar2", lambda x: x**2, lambda x: x**2, lambda x: x**2)
unary("rpow", lambda x: 2.0**x, lambda x: 2.0**x, lambda x: 2.0**x)
unary("rsub", lambda x: 1.5 - x, lambda x: 1.5 - x, lambda x: 1.5 - x)
unary("rdiv", lambda x: 1.5 / x, lambda x: 1.5 / x, lambda x: 1.5 / x, make=positive)
unary("exp", F.exp, np.exp, lambda x: x.exp())
unary("log", F.log, np.log, lambda x: x.log(), make=positive)
unary("sqrt", F.sqrt, np.sqrt, lambda x: x.sqrt(), make=positive)
unary("abs", F.abs, np.abs, lambda x: x.abs(), make=away_from_zero)
unary("clip", lambda x: F.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5),
      lambda x: x.clamp(-0.5, 0.5), make=away_from_zero)
unary("abs_method", lambda x: x.abs(), np.abs, lambda x: x.abs(), make=away_from_zero)
unary("clip_method", lambda x: x.clip(max=0.5), lambda x: np.minimum(x, 0.5),
      lambda x: x.clamp(max=0.5), make=away_from_zero)

for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
               ((5, 2, 3), (3, 4)), ((2, 3, 2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)),
               ((1, 2, 3), (4, 3, 2))]:
    CASES.append(Case(f"matmul{sa}{sb}", lambda a, b: a @ b, np.matmul,
                      inputs(randn(*sa), randn(*sb)), lambda a, b: a @ b))

for shape, axis, keep in [((), None, False), ((3,), None, False), ((2, 3), 0, False),
                          ((2, 3), 1, True), ((2, 3, 4), (0, 2), False), ((2, 1, 4), -2, True)]:
    tag = f"{shape}axis={axis},keep={keep}"
    dims = axis if axis is not None else tuple(range(len(shape)))

    def _torch_reduce(method, axis=axis, keep=keep, dims=dims):
        return lambda x: getattr(x, method)(dim=dims, keepdim=keep) if dims != () else x

    CASES.append(Case(f"sum{tag}", lambda x, a=axis, k=keep: x.sum(a, k),
                      lambda x, a=axis, k=keep: np.sum(x, axis=a, keepdims=k),
                      inputs(randn(*shape)), _torch_reduce("sum")))
    CASES.append(Case(f"mean{tag}", lambda x, a=axis, k=keep: x.mean(a, k),
                      lambda x, a=axis, k=keep: np.mean(x, axis=a, keepdims=k),
                      inputs(randn(*shape)), _torch_reduce("mean")))
    CASES.append(Case(f"max{tag}", lambda x, a=axis, k=keep: x.amax(a, k),
                      lambda x, a=axis, k=keep: np.max(x, axis=a, keepdims=k),
                      inputs(randn(*shape)), _torch_reduce("amax")))
    CASES.append(Case(f"min{tag}", lambda x, a=axis, k=keep: x.amin(a, k),
                      lambda x, a=axis, k=keep: np.min(x, axis=a, keepdims=k),
                      inputs(randn(*shape)), _torch_reduce("amin")))

CASES += [
    Case("reshape", lambda x: x.reshape(3, -1), lambda x: x.reshape(3, -1),
         inputs(randn(2, 3, 2)), lambda x: x.reshape(3, -1)),
    Case("permute", lambda x: x.permute(2, 0, 1), lambda x: x.transpose(2, 0, 1),
         inputs(randn(2, 3, 4)), lambda x: x.permute(2, 0, 1)),
    Case("T", lambda x: x.T, lambda x: x.T, inputs(randn(2, 3)), lambda x: x.T),
    Case("broadcast_to", lambda x: F.broadcast_to(x, (2, 3, 4)),
         lambda x: np.broadcast_to(x, (2, 3, 4)), inputs(randn(3, 1)),
         lambda x: x.expand(2, 3, 4)),
    Case("getitem_slice", lambda x: x[1:, ::2], lambda x: x[1:, ::2], inputs(randn(3, 5)),
         lambda x: x[1:, ::2]),
    Case("getitem_int", lambda x: x[1], lambda x: x[1], inputs(randn(3, 5)), lambda x: x[1]),
    Case("getitem_intarray_repeats", lambda x: x[[0, 2, 0, 0]], lambda x: x[[0, 2, 0, 0]],
         inputs(randn(3, 2)), lambda x: x[[0, 2, 0, 0]]),
    Case("getitem_mask", lambda x: x[x.array > 0], lambda x: x[x > 0], inputs(randn(4, 3))),
    Case("getitem_newaxis_ellipsis", lambda x: x[None, ..., 0], lambda x: x[None, ..., 0],
         inputs(randn(2, 3)), lambda x: x[None, ..., 0]),
]

# -- activations ------------------------------------------------------------------------
def _np_gelu(x):
    return x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


unary("relu", F.relu, lambda x: np.maximum(x, 0), lambda x: x.relu(), make=away_from_zero)
for slope in (0.2, 3.0, -0.5):  # the kernel picks by max below slope 1, by min above
    unary(f"leaky_relu{slope}", lambda x, s=slope: F.leaky_relu(x, s),
          lambda x, s=slope: np.where(x > 0, x, s * x),
          lambda x, s=slope: _t().nn.functional.leaky_relu(x, s), make=away_from_zero)
for alpha in (1.5, 0.5):
    unary(f"elu{alpha}", lambda x, a=alpha: F.elu(x, a),
          lambda x, a=alpha: np.where(x > 0, x, a * (np.exp(x) - 1)),
          lambda x, a=alpha: _t().nn.functional.elu(x, a), make=away_from_zero)
unary("gelu", F.gelu, _np_gelu, lambda x: _t().nn.functional.gelu(x))
unary("gelu_tanh", lambda x: F.gelu(x, "tanh"),
      lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
      lambda x: _t().nn.functional.gelu(x, approximate="tanh"))
unary("silu", F.silu, lambda x: x * _np_sigmoid(x), lambda x: _t().nn.functional.silu(x))
unary("sigmoid", F.sigmoid, _np_sigmoid, lambda x: x.sigmoid())
unary("tanh", F.tanh, np.tanh, lambda x: x.tanh())
for shape, axis in [((4,), -1), ((2, 5), -1), ((2, 5), 0), ((2, 3, 4), 1)]:
    CASES.append(Case(f"softmax{shape}axis={axis}", lambda x, a=axis: F.softmax(x, a),
                      lambda x, a=axis: _np_softmax(x, a), inputs(randn(*shape)),
                      lambda x, a=axis: x.softmax(a)))
    CASES.append(Case(f"log_softmax{shape}axis={axis}", lambda x, a=axis: F.log_softmax(x, a),
                      lambda x, a=axis: np.log(_np_softmax(x, a)), inputs(randn(*shape)),
                      lambda x, a=axis: x.log_softmax(a)))

# -- connection -------------------------------------------------------------------------
CASES += [
    Case("linear", F.linear, lambda x, W, b: x @ W.T + b, inputs(randn(4, 3), randn(5, 3),
         randn(5)), lambda x, W, b: _t().nn.functional.linear(x, W, b)),
    Case("linear_nobias_3d", F.linear, lambda x, W: x @ W.T, inputs(randn(2, 4, 3), randn(5, 3)),
         lambda x, W: _t().nn.functional.linear(x, W)),
    # a time-major view of a batch-first array, as an LSTM reads it: not contiguous
    Case("linear_3d_strided", lambda x, W, b: F.linear(x.transpose(0, 1), W, b),
         lambda x, W, b: np.swapaxes(x, 0, 1) @ W.T + b,
         inputs(randn(4, 2, 3), randn(5, 3), randn(5)),
         lambda x, W, b: _t().nn.functional.linear(x.transpose(0, 1), W, b)),
    Case("embedding", lambda ids, W: F.embedding(ids, W), lambda ids, W: W[ids],
         inputs(lambda rng: np.array([[0, 2, 2], [4, 0, 1]]), randn(5, 3)),
         lambda ids, W: _t().nn.functional.embedding(ids, W)),
]


# -- convolution and pooling: naive references (loops over output positions) ----------
def conv2d_ref(x, W, b=None, stride=1, padding=0, dilation=1, groups=1):
    s, p, d = (_pair(v) for v in (stride, padding, dilation))
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    n, c, h, w = x.shape
    o, cg, kh, kw = W.shape
    oh = (h - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = (w - d[1] * (kw - 1) - 1) // s[1] + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = x[:, g * cg:(g + 1) * cg, i * s[0]:i * s[0] + d[0] * (kh - 1) + 1:d[0],
                          j * s[1]:j * s[1] + d[1] * (kw - 1) + 1:d[1]]
                y[:, oc, i, j] = (patch * W[oc]).sum(axis=(1, 2, 3))
    return y + (b.reshape(1, -1, 1, 1) if b is not None else 0)


def conv1d_ref(x, W, b=None, stride=1, padding=0, dilation=1, groups=1):
    return conv2d_ref(x[:, :, None], W[:, :, None], b, (1, stride), (0, padding), (1, dilation),
                      groups)[:, :, 0]


def pool2d_ref(x, k, s=None, p=0, kind="max"):
    k, p = _pair(k), _pair(p)
    s = _pair(s) if s is not None else k
    fill = -np.inf if kind == "max" else 0.0
    x = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])), constant_values=fill)
    oh, ow = (x.shape[2] - k[0]) // s[0] + 1, (x.shape[3] - k[1]) // s[1] + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
            y[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return y


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


CONV2D = [
    dict(), dict(stride=2), dict(padding=1), dict(dilation=2), dict(stride=(2, 1), padding=(1, 2)),
    dict(groups=2), dict(stride=2, padding=1, dilation=2, groups=2),
]
for kw in CONV2D:
    g = kw.get("groups", 1)
    CASES.append(Case(
        f"conv2d{kw}", lambda x, W, b, kw=kw: F.conv2d(x, W, b, **kw),
        lambda x, W, b, kw=kw: conv2d_ref(x, W, b, **kw),
        inputs(randn(2, 4, 7, 6), randn(6, 4 // g, 3, 3), randn(6)),
        lambda x, W, b, kw=kw: _t().nn.functional.conv2d(x, W, b, **kw)))
# Stride 1 runs im2col over flattened padded rows: kernels of every aspect, with padding
# and dilation, where a row's run overshoots into the next row or past the image.
for kernel, kw in [((2, 3), dict(padding=(1, 0))), ((1, 1), dict()), ((3, 1), dict(dilation=(2, 1))),
                   ((3, 3), dict(padding=(2, 1), dilation=(1, 2), groups=2))]:
    g = kw.get("groups", 1)
    CASES.append(Case(
        f"conv2d{kernel}{kw}", lambda x, W, b, kw=kw: F.conv2d(x, W, b, **kw),
        lambda x, W, b, kw=kw: conv2d_ref(x, W, b, **kw),
        inputs(randn(2, 4, 7, 6), randn(6, 4 // g, *kernel), randn(6)),
        lambda x, W, b, kw=kw: _t().nn.functional.conv2d(x, W, b, **kw)))
CASES.append(Case("conv2d_nobias", lambda x, W: F.conv2d(x, W, padding=1),
                  lambda x, W: conv2d_ref(x, W, padding=1), inputs(randn(1, 1, 5, 5),
                  randn(2, 1, 3, 3)), lambda x, W: _t().nn.functional.conv2d(x, W, padding=1)))
for kw in [dict(), dict(stride=2, padding=2), dict(dilation=2, groups=2)]:
    g = kw.get("groups", 1)
    CASES.append(Case(
        f"conv1d{kw}", lambda x, W, b, kw=kw: F.conv1d(x, W, b, **kw),
        lambda x, W, b, kw=kw: conv1d_ref(x, W, b, **kw),
        inputs(randn(2, 4, 9), randn(6, 4 // g, 3), randn(6)),
        lambda x, W, b, kw=kw: _t().nn.functional.conv1d(x, W, b, **kw)))

for kind in ("max", "avg"):
    for k, s, p in [(2, None, 0), (2, 2, 1), (3, 2, 1), ((2, 3), (1, 2), (1, 1))]:
        fn2 = getattr(F, f"{kind}_pool2d")
        CASES.append(Case(
            f"{kind}_pool2d k={k} s={s} p={p}", lambda x, f=fn2, k=k, s=s, p=p: f(x, k, s, p),
            lambda x, k=k, s=s, p=p, kind=kind: pool2d_ref(x, k, s, p, kind),
            inputs(randn(2, 3, 6, 7)),
            lambda x, k=k, s=s, p=p, kind=kind: getattr(_t().nn.functional, f"{kind}_pool2d")(
                x, k, s if s is not None else k, p)))
    # Windows that tile the input exactly (every element in one window), and 1x1 windows.
    for k in (2, 1):
        CASES.append(Case(
            f"{kind}_pool2d k={k} tiled", lambda x, f=fn2, k=k: f(x, k),
            lambda x, k=k, kind=kind: pool2d_ref(x, k, None, 0, kind), inputs(randn(2, 3, 6, 8)),
            lambda x, k=k, kind=kind: getattr(_t().nn.functional, f"{kind}_pool2d")(x, k)))
    fn1 = getattr(F, f"{kind}_pool1d")
    CASES.append(Case(
        f"{kind}_pool1d", lambda x, f=fn1: f(x, 3, 2, 1),
        lambda x, kind=kind: pool2d_ref(x[:, :, None], (1, 3), (1, 2), (0, 1), kind)[:, :, 0],
        inputs(randn(2, 3, 8)),
        lambda x, kind=kind: getattr(_t().nn.functional, f"{kind}_pool1d")(x, 3, 2, 1)))


def conv_transpose2d_ref(x, W, b=None, s=(1, 1), p=(0, 0), q=(0, 0), g=1, d=(1, 1)):
    """Every input pixel adds its kernel-sized patch, W weighted, into the output."""
    n, c, h, w = x.shape
    _, og, kh, kw = W.shape
    full = ((h - 1) * s[0] + d[0] * (kh - 1) + 1 + q[0], (w - 1) * s[1] + d[1] * (kw - 1) + 1 + q[1])
    y = np.zeros((n, og * g, *full))
    for ci, i, j in np.ndindex(c, h, w):
        k = ci // (c // g)
        for a, e in np.ndindex(kh, kw):
            y[:, k * og:(k + 1) * og, i * s[0] + a * d[0], j * s[1] + e * d[1]] += (
                x[:, ci, i, j, None] * W[ci, :, a, e])
    y = y[:, :, p[0]:full[0] - p[0], p[1]:full[1] - p[1]]
    return y if b is None else y + b[:, None, None]


for name, kw, shapes in [
    ("plain", {}, ((2, 3, 3, 4), (3, 2, 2, 3))),
    ("stride2_pad1_outpad1", {"s": (2, 2), "p": (1, 1), "q": (1, 1)}, ((1, 2, 3, 3), (2, 3, 3, 3))),
    ("groups2_dilation", {"s": (1, 2), "p": (0, 1), "d": (2, 1), "g": 2},
     ((2, 4, 3, 2), (4, 1, 2, 3))),
]:
    args = {"stride": kw.get("s", 1), "padding": kw.get("p", 0),
            "output_padding": kw.get("q", 0), "groups": kw.get("g", 1),
            "dilation": kw.get("d", 1)}
    CASES.append(Case(
        f"conv_transpose2d_{name}", lambda x, W, b, a=args: F.conv_transpose2d(x, W, b, **a),
        lambda x, W, b, kw=kw: conv_transpose2d_ref(x, W, b, **kw),
        inputs(randn(*shapes[0]), randn(*shapes[1]), randn(shapes[1][1] * kw.get("g", 1))),
        lambda x, W, b, a=args: _t().nn.functional.conv_transpose2d(x, W, b, **a)))
CASES.append(Case(
    "conv_transpose1d", lambda x, W: F.conv_transpose1d(x, W, None, 2, 1, 1),
    lambda x, W: conv_transpose2d_ref(x[:, :, None], W[:, :, None], None, (1, 2), (0, 1),
                                      (0, 1))[:, :, 0],
    inputs(randn(2, 3, 4), randn(3, 2, 3)),
    lambda x, W: _t().nn.functional.conv_transpose1d(x, W, None, 2, 1, 1)))


def adaptive_avg_ref(x, sizes):
    """A loop over output cells, each the mean of its bin floor(i*n/m):ceil((i+1)*n/m)."""
    sizes = [n if m is None else m for n, m in zip(x.shape[2:], sizes)]
    out = np.empty(x.shape[:2] + tuple(sizes))
    for cell in np.ndindex(*sizes):
        bins = tuple(slice(math.floor(i * n / m), math.ceil((i + 1) * n / m))
                     for i, n, m in zip(cell, x.shape[2:], sizes))
        out[(..., *cell)] = x[(..., *bins)].mean(axis=tuple(range(2, x.ndim)))
    return out


for size, shape in [(1, (2, 3, 5, 4)), ((3, 2), (2, 3, 7, 5)), ((None, 2), (2, 2, 3, 5)),
                    ((5, 3), (1, 2, 3, 2)), ((2, 3), (1, 2, 2, 3))]:
    CASES.append(Case(
        f"adaptive_avg_pool2d{size}{shape}", lambda x, m=size: F.adaptive_avg_pool2d(x, m),
        lambda x, m=size: adaptive_avg_ref(x, m if isinstance(m, tuple) else (m, m)),
        inputs(randn(*shape)),
        lambda x, m=size: _t().nn.functional.adaptive_avg_pool2d(x, m)))
for size, length in [(1, 6), (4, 9), (7, 3)]:
    CASES.append(Case(
        f"adaptive_avg_pool1d{size}L{length}", lambda x, m=size: F.adaptive_avg_pool1d(x, m),
        lambda x, m=size: adaptive_avg_ref(x, (m,)), inputs(randn(2, 3, length)),
        lambda x, m=size: _t().nn.functional.adaptive_avg_pool1d(x, m)))


def interpolate_ref(x, outs, scales, mode, align_corners):
    """PyTorch's interpolate, one output cell at a time: per axis a source coordinate,
    then the nearest sample, the two around it, the four of a cubic or an area's window
    (a product of 1-D weights)."""
    def cubic(d):  # the cubic convolution kernel, a = -0.75
        d, a = abs(d), -0.75
        if d <= 1:
            return (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
        return a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a if d < 2 else 0.0

    def taps(i, n, m, scale):
        step = 1 / scale if scale else n / m
        if mode == "nearest":
            return [(min(math.floor(i * step), n - 1), 1.0)]
        if mode == "nearest-exact":
            return [(min(math.floor((i + 0.5) * step), n - 1), 1.0)]
        if mode == "area":
            lo, hi = (i * n) // m, -(-(i + 1) * n // m)
            return [(j, 1 / (hi - lo)) for j in range(lo, hi)]
        if align_corners:
            src = i * (n - 1) / (m - 1) if m > 1 else 0.0
        elif mode == "bicubic":
            src = (i + 0.5) * step - 0.5
        else:
            src = max((i + 0.5) * step - 0.5, 0.0)
        if mode == "bicubic":
            base = math.floor(src)
            return [(min(max(base + k, 0), n - 1), cubic(src - base - k)) for k in (-1, 0, 1, 2)]
        lo = min(math.floor(src), n - 1)
        return [(lo, 1 - (src - lo)), (min(lo + 1, n - 1), src - lo)]

    out = np.zeros(x.shape[:2] + tuple(outs))
    for cell in np.ndindex(*outs):
        per_axis = [taps(i, n, m, s) for i, n, m, s in
                    zip(cell, x.shape[2:], outs, scales or [None] * len(outs))]
        for combo in itertools.product(*per_axis):
            out[(..., *cell)] += np.prod([w for _, w in combo]) * x[(..., *(j for j, _ in combo))]
    return out


for shape, kw, outs in [
        ((2, 3, 3, 4), {"scale_factor": 2}, (6, 8)),
        ((2, 2, 5, 4), {"size": (7, 3)}, (7, 3)),
        ((2, 2, 5, 4), {"scale_factor": 1.5}, (7, 6)),
        ((2, 2, 4, 5), {"size": (7, 9), "mode": "bilinear"}, (7, 9)),
        ((2, 2, 5, 4), {"scale_factor": 1.7, "mode": "bilinear"}, (8, 6)),
        ((1, 2, 5, 4), {"size": (9, 2), "mode": "bilinear", "align_corners": True}, (9, 2)),
        ((2, 3, 6), {"size": 11, "mode": "linear"}, (11,)),
        ((2, 3, 6), {"scale_factor": 0.5, "mode": "linear"}, (3,)),
        ((2, 3, 4), {"scale_factor": 3}, (12,)),
        ((1, 2, 4, 5), {"size": (7, 9), "mode": "bicubic"}, (7, 9)),
        ((1, 2, 5, 4), {"scale_factor": 0.7, "mode": "bicubic"}, (3, 2)),
        ((1, 2, 3, 4), {"size": (5, 6), "mode": "bicubic", "align_corners": True}, (5, 6)),
        ((1, 2, 2, 3, 4), {"size": (3, 4, 2), "mode": "trilinear"}, (3, 4, 2)),
        ((1, 2, 7, 5), {"size": (3, 2), "mode": "area"}, (3, 2)),
        ((1, 2, 7), {"size": 5, "mode": "area"}, (5,)),
        ((1, 2, 5, 4), {"size": (8, 3), "mode": "nearest-exact"}, (8, 3)),
        ((1, 2, 2, 3, 2), {"scale_factor": 2}, (4, 6, 4))]:
    scales = kw.get("scale_factor")
    scales = None if scales is None else [scales] * len(outs)
    CASES.append(Case(
        f"interpolate{shape}{sorted(kw.items())}", lambda x, kw=kw: F.interpolate(x, **kw),
        lambda x, o=outs, s=scales, kw=kw: interpolate_ref(
            x, o, s, kw.get("mode", "nearest"), kw.get("align_corners")),
        inputs(randn(*shape)),
        lambda x, kw=kw: _t().nn.functional.interpolate(x, **kw)))


# -- normalisation ----------------------------------------------------------------------
def bn_ref(x, gamma, beta):
    axes = (0, *range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mu, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * gamma.reshape(shape) + beta.reshape(shape)


def _torch_bn(x, gamma, beta):
    return _t().nn.functional.batch_norm(x, None, None, gamma, beta, training=True)


for shape in [(5, 3), (4, 3, 5), (2, 3, 4, 4)]:
    CASES.append(Case(f"batch_norm_train{shape}",
                      lambda x, g, b: F.batch_norm(x, None, None, g, b, training=True),
                      bn_ref, inputs(randn(*shape), randn(3), randn(3)), _torch_bn))


def _bn_eval(x, g, b):
    return F.batch_norm(x, np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.5, 2.0]), g, b, False)


def _bn_eval_ref(x, g, b):
    m, v = np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.5, 2.0])
    return (x - m[:, None]) / np.sqrt(v[:, None] + 1e-5) * g[:, None] + b[:, None]


def _torch_bn_eval(x, g, b):
    t = _t()
    m = t.tensor([0.1, -0.2, 0.3], dtype=x.dtype)
    v = t.tensor([1.5, 0.5, 2.0], dtype=x.dtype)
    return t.nn.functional.batch_norm(x, m, v, g, b, training=False)


CASES.append(Case("batch_norm_eval", _bn_eval, _bn_eval_ref,
                  inputs(randn(4, 3, 5), randn(3), randn(3)), _torch_bn_eval))
_M, _S = np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.5, 2.0])
CASES += [Case(f"standardize_axis{a}", lambda x, a=a: F.standardize(x, _M, _S, a),
               lambda x, a=a: np.moveaxis((np.moveaxis(x, a, -1) - _M) / _S, -1, a),
               inputs(randn(*shape)))
          for a, shape in ((1, (4, 3, 5)), (-1, (2, 4, 3)), (1, (5, 3)))]

def ln_ref(x, *affine, k=1):
    axes = tuple(range(x.ndim - k, x.ndim))
    mu, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5)
    return y if not affine else y * affine[0] + affine[1]


CASES += [
    Case("layer_norm(4, 5)", lambda x, w, b: F.layer_norm(x, 5, w, b), ln_ref,
         inputs(randn(4, 5), randn(5), randn(5)),
         lambda x, w, b: _t().nn.functional.layer_norm(x, (5,), w, b)),
    Case("layer_norm(2, 3, 4, 5) over (4, 5)", lambda x, w, b: F.layer_norm(x, (4, 5), w, b),
         lambda x, w, b: ln_ref(x, w, b, k=2), inputs(randn(2, 3, 4, 5), randn(4, 5), randn(4, 5)),
         lambda x, w, b: _t().nn.functional.layer_norm(x, (4, 5), w, b)),
    Case("layer_norm weight only", lambda x, w: F.layer_norm(x, 6, w),
         lambda x, w: ln_ref(x) * w, inputs(randn(3, 6), randn(6)),
         lambda x, w: _t().nn.functional.layer_norm(x, (6,), w)),
    Case("layer_norm no affine", lambda x: F.layer_norm(x, 6), ln_ref, inputs(randn(3, 6)),
         lambda x: _t().nn.functional.layer_norm(x, (6,))),
]

def gn_ref(x, groups, *affine):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    y = ((g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + 1e-5))
    y = y.reshape(x.shape)
    per_channel = (c,) + (1,) * (x.ndim - 2)
    for i, p in enumerate(affine):  # weight, then bias
        y = y * p.reshape(per_channel) if i == 0 else y + p.reshape(per_channel)
    return y


CASES += [
    Case("group_norm(3, 6, 4, 5) 3 groups", lambda x, w, b: F.group_norm(x, 3, w, b),
         lambda x, w, b: gn_ref(x, 3, w, b), inputs(randn(3, 6, 4, 5), randn(6), randn(6)),
         lambda x, w, b: _t().nn.functional.group_norm(x, 3, w, b)),
    Case("group_norm(2, 4, 5) instance", lambda x: F.group_norm(x, 4),
         lambda x: gn_ref(x, 4), inputs(randn(2, 4, 5)),
         lambda x: _t().nn.functional.group_norm(x, 4)),
    Case("group_norm(3, 6) weight only", lambda x, w: F.group_norm(x, 2, w),
         lambda x, w: gn_ref(x, 2, w), inputs(randn(3, 6), randn(6)),
         lambda x, w: _t().nn.functional.group_norm(x, 2, w)),
]


def sdpa_ref(q, k, v, causal=False, allowed=None, bias=0.0):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1]) + bias
    keep = np.ones(scores.shape, bool) if allowed is None else np.broadcast_to(allowed,
                                                                               scores.shape)
    if causal:
        keep = keep & np.tril(np.ones(scores.shape[-2:], bool))
    e = np.where(keep, np.exp(scores - scores.max(axis=-1, keepdims=True)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0) @ v  # no key: zeros


# Query 1 of head 0 may attend to no key: its output is zeros.
SDPA_ALLOWED = np.array([[[1, 0, 1, 1, 0, 1], [0, 0, 0, 0, 0, 0], [1, 1, 0, 1, 1, 1],
                          [0, 1, 1, 1, 1, 0]], [[1] * 6, [0, 1, 1, 0, 1, 1], [1, 1, 1, 0, 0, 0],
                                                [0, 0, 1, 0, 1, 1]]], bool)[None]


CASES += [
    Case("scaled_dot_product_attention", F.scaled_dot_product_attention, sdpa_ref,
         inputs(randn(2, 3, 4, 5), randn(2, 3, 6, 5), randn(2, 3, 6, 7)),
         lambda q, k, v: _t().nn.functional.scaled_dot_product_attention(q, k, v)),
    Case("scaled_dot_product_attention causal",
         lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
         lambda q, k, v: sdpa_ref(q, k, v, causal=True),
         inputs(randn(2, 5, 4), randn(2, 5, 4), randn(2, 5, 3)),
         lambda q, k, v: _t().nn.functional.scaled_dot_product_attention(q, k, v,
                                                                         is_causal=True)),
    Case("scaled_dot_product_attention boolean mask",
         lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=SDPA_ALLOWED),
         lambda q, k, v: sdpa_ref(q, k, v, allowed=SDPA_ALLOWED),
         inputs(randn(2, 2, 4, 5), randn(2, 2, 6, 5), randn(2, 2, 6, 3)),
         lambda q, k, v: _t().nn.functional.scaled_dot_product_attention(
             q, k, v, attn_mask=_t().tensor(SDPA_ALLOWED))),
    Case("scaled_dot_product_attention causal, boolean mask",
         lambda q, k, v: F.scaled_dot_product_attention(q, k, v, causal=True,
                                                        attn_mask=SDPA_ALLOWED[0, 1, :, :4]),
         lambda q, k, v: sdpa_ref(q, k, v, causal=True, allowed=SDPA_ALLOWED[0, 1, :, :4]),
         inputs(randn(3, 4, 5), randn(3, 4, 5), randn(3, 4, 2))),
    Case("scaled_dot_product_attention float mask (learned bias)",
         lambda q, k, v, b: F.scaled_dot_product_attention(q, k, v, attn_mask=b),
         lambda q, k, v, b: sdpa_ref(q, k, v, bias=b),
         inputs(randn(2, 3, 4, 5), randn(2, 3, 6, 5), randn(2, 3, 6, 7), randn(3, 4, 6)),
         lambda q, k, v, b: _t().nn.functional.scaled_dot_product_attention(q, k, v,
                                                                         attn_mask=b)),
    Case("scaled_dot_product_attention grouped query heads",
         lambda q, k, v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True),
         lambda q, k, v: sdpa_ref(q, np.repeat(k, 2, axis=-3), np.repeat(v, 2, axis=-3)),
         inputs(randn(2, 4, 3, 5), randn(2, 2, 6, 5), randn(2, 2, 6, 3)),
         lambda q, k, v: _t().nn.functional.scaled_dot_product_attention(q, k, v,
                                                                         enable_gqa=True)),
]

# -- array ops --------------------------------------------------------------------------
CASES += [
    Case("concat", lambda a, b: F.concat([a, b], axis=1),
         lambda a, b: np.concatenate([a, b], axis=1), inputs(randn(2, 3), randn(2, 4)),
         lambda a, b: _t().cat([a, b], dim=1)),
    Case("stack", lambda a, b: F.stack([a, b], axis=1), lambda a, b: np.stack([a, b], axis=1),
         inputs(randn(2, 3), randn(2, 3)), lambda a, b: _t().stack([a, b], dim=1)),
    Case("split_size", lambda x: F.split(x, 2, axis=1),
         lambda x: tuple(np.split(x, [2, 4], axis=1)), inputs(randn(3, 5)),
         lambda x: _t().split(x, 2, dim=1)),
    Case("split_sections_one_unused", lambda x: F.split(x, [1, 3], axis=0)[1],
         lambda x: x[1:], inputs(randn(4, 2)), lambda x: _t().split(x, [1, 3], dim=0)[1]),
    Case("pad", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5),
         lambda x: np.pad(x, ((0, 0), (0, 1), (1, 2)), constant_values=0.5),
         inputs(randn(2, 3, 4)), lambda x: _t().nn.functional.pad(x, (1, 2, 0, 1), value=0.5)),
    Case("flatten", lambda x: F.flatten(x, 1), lambda x: x.reshape(2, -1), inputs(randn(2, 3, 4)),
         lambda x: _t().flatten(x, 1)),
    Case("flatten_middle", lambda x: F.flatten(x, 1, 2), lambda x: x.reshape(2, 12, 5),
         inputs(randn(2, 3, 4, 5)), lambda x: _t().flatten(x, 1, 2)),
]

CASES += LOSS_CASES


# -- recurrent cells: references composed step by step from the gate equations ----------
def lstm_cell_ref(gates, c):
    i, f, g, o = np.split(gates, 4, axis=1)
    c2 = _np_sigmoid(f) * c + _np_sigmoid(i) * np.tanh(g)
    return _np_sigmoid(o) * np.tanh(c2), c2


def gru_cell_ref(gx, gh, h):
    xr, xz, xn = np.split(gx, 3, axis=1)
    hr, hz, hn = np.split(gh, 3, axis=1)
    r, z = _np_sigmoid(xr + hr), _np_sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return (1 - z) * n + z * h


CASES += [
    Case("lstm_cell", F.lstm_cell, lstm_cell_ref, inputs(randn(3, 8), randn(3, 2))),
    Case("gru_cell", F.gru_cell, gru_cell_ref, inputs(randn(3, 6), randn(3, 6), randn(3, 2))),
]
unary("softplus", F.softplus, lambda x: np.log1p(np.exp(x)),
      lambda x: _t().nn.functional.softplus(x))
CASES.append(Case("unbind", lambda x: F.unbind(x, 1), lambda x: tuple(np.moveaxis(x, 1, 0)),
                  inputs(randn(2, 3, 4)), lambda x: _t().unbind(x, 1)))


def lstm_sequence_ref(xg, h0, c0, W, b):
    hs, h, c = [], h0, c0
    for t in range(xg.shape[0]):
        h, c = lstm_cell_ref(xg[t] + h @ W.T + b, c)
        hs.append(h)
    return np.stack(hs), h, c


CASES.append(Case("lstm_sequence", F.lstm_sequence, lstm_sequence_ref,
                  inputs(randn(4, 3, 8), randn(3, 2), randn(3, 2), randn(8, 2), randn(8))))


def gru_sequence_ref(xg, h0, W, b=None):
    hs, h = [], h0
    for t in range(xg.shape[0]):
        h = gru_cell_ref(xg[t], h @ W.T + (0 if b is None else b), h)
        hs.append(h)
    return np.stack(hs), h


CASES += [
    Case("gru_sequence", F.gru_sequence, gru_sequence_ref,
         inputs(randn(4, 3, 6), randn(3, 2), randn(6, 2), randn(6))),
    Case("gru_sequence_no_bias", F.gru_sequence, gru_sequence_ref,
         inputs(randn(5, 2, 9), randn(2, 3), randn(9, 3))),
]

CASES += TENSOR_CASES
