"""Op cases for the ops behind PyTorch's tensor methods (elementwise, reductions,
indexing, shape, products): each with an independent NumPy reference, so the generic
checks of tests/functions/test_functions.py (float64 central differences, dtypes, no_grad, freed
arrays, strided inputs) cover them too."""

from __future__ import annotations

import math

import numpy as np
from op_table import Case, away_from_zero, inputs, positive, randn

TENSOR_CASES: list[Case] = []
_erf = np.vectorize(math.erf)


def _unit(*shape):
    return lambda rng: rng.uniform(-0.8, 0.8, shape)


def _index(high, *shape):
    return lambda rng: rng.integers(0, high, shape)


def _distinct(*shape):
    """Values with no ties (so max/sort pick one element, as central differences need)."""
    return lambda rng: rng.permutation(int(np.prod(shape))).reshape(shape) * 0.37 + \
        rng.uniform(0, 0.01, shape)


def add(name, fn, ref, make, torch_fn=None, **kw):
    TENSOR_CASES.append(Case(name, fn, ref, make, torch_fn, **kw))


UNARY = [
    ("expm1", np.expm1, randn), ("log1p", np.log1p, positive),
    ("log2", np.log2, positive), ("log10", np.log10, positive),
    ("rsqrt", lambda x: 1 / np.sqrt(x), positive), ("square", np.square, randn),
    ("reciprocal", lambda x: 1 / x, positive), ("sin", np.sin, randn), ("cos", np.cos, randn),
    ("tan", np.tan, _unit), ("asin", np.arcsin, _unit), ("acos", np.arccos, _unit),
    ("atan", np.arctan, randn), ("sinh", np.sinh, randn), ("cosh", np.cosh, randn),
    ("asinh", np.arcsinh, randn), ("atanh", np.arctanh, _unit), ("erf", _erf, randn),
    ("exp2", np.exp2, randn), ("frac", lambda x: x - np.trunc(x), away_from_zero),
]
for name, ref, make in UNARY:
    for shape in [(), (3,), (2, 1, 3)]:
        add(f"{name}{shape}", lambda x, n=name: getattr(x, n)(), ref, inputs(make(*shape)),
            lambda x, n=name: getattr(x, n)())

for name, ref in [("fmod", np.fmod), ("remainder", np.remainder), ("atan2", np.arctan2)]:
    for sa, sb in [((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3))]:
        add(f"{name}{sa}{sb}", lambda a, b, n=name: getattr(a, n)(b), ref,
            inputs(randn(*sa), positive(*sb)), lambda a, b, n=name: getattr(a, n)(b))
add("lerp", lambda a, b, w: a.lerp(b, w), lambda a, b, w: a + w * (b - a),
    inputs(randn(2, 3), randn(2, 3), randn(3)), lambda a, b, w: a.lerp(b, w))

for shape, dim, keep in [((4,), None, False), ((2, 3), 1, False), ((2, 3, 4), (0, 2), True)]:
    tag = f"{shape}dim={dim}"
    add(f"var{tag}", lambda x, d=dim, k=keep: x.var(d, keepdim=k),
        lambda x, d=dim, k=keep: np.var(x, axis=d, ddof=1, keepdims=k), inputs(randn(*shape)),
        lambda x, d=dim, k=keep: x.var(d, keepdim=k))
    add(f"std{tag}", lambda x, d=dim, k=keep: x.std(d, correction=0, keepdim=k),
        lambda x, d=dim, k=keep: np.std(x, axis=d, keepdims=k), inputs(randn(*shape)),
        lambda x, d=dim, k=keep: x.std(d, correction=0, keepdim=k))
    add(f"logsumexp{tag}", lambda x, d=dim, k=keep: x.logsumexp(d, k),
        lambda x, d=dim, k=keep: np.log(np.exp(x).sum(axis=d, keepdims=k)),
        inputs(randn(*shape)), lambda x, d=dim, k=keep: x.logsumexp(d if d is not None else
                                                                    tuple(range(x.ndim)), k))
    add(f"norm{tag}", lambda x, d=dim, k=keep: x.norm(dim=d, keepdim=k),
        lambda x, d=dim, k=keep: np.sqrt((x * x).sum(axis=d, keepdims=k)),
        inputs(randn(*shape)), lambda x, d=dim, k=keep: x.norm(dim=d, keepdim=k))
add("norm1", lambda x: x.norm(1, dim=1), lambda x: np.abs(x).sum(1),
    inputs(away_from_zero(2, 3)), lambda x: x.norm(1, dim=1))
add("norm3", lambda x: x.norm(3), lambda x: (np.abs(x) ** 3).sum() ** (1 / 3),
    inputs(away_from_zero(2, 3)), lambda x: x.norm(3))
for shape, dim in [((4,), None), ((2, 3), 1), ((2, 3), 0)]:
    add(f"prod{shape}{dim}", lambda x, d=dim: x.prod(d), lambda x, d=dim: np.prod(x, axis=d),
        inputs(randn(*shape)), lambda x, d=dim: x.prod() if d is None else x.prod(d))
add("prod_with_zero", lambda x: x.prod(1), lambda x: np.prod(x, 1),
    lambda rng: [np.array([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0], [1.0, -2.0, 0.5]])],
    lambda x: x.prod(1))
for dim in (0, 1):
    add(f"cumsum{dim}", lambda x, d=dim: x.cumsum(d), lambda x, d=dim: np.cumsum(x, d),
        inputs(randn(3, 4)), lambda x, d=dim: x.cumsum(d))
    add(f"cumprod{dim}", lambda x, d=dim: x.cumprod(d), lambda x, d=dim: np.cumprod(x, d),
        inputs(randn(3, 4)), lambda x, d=dim: x.cumprod(d))
add("cumprod_with_zero", lambda x: x.cumprod(1), lambda x: np.cumprod(x, 1),
    lambda rng: [np.array([[2.0, 0.0, 3.0, 0.5], [1.5, -1.0, 0.0, 0.0]])],
    lambda x: x.cumprod(1))

add("max_dim", lambda x: x.max(1).values, lambda x: x.max(1), inputs(_distinct(3, 4)),
    lambda x: x.max(1).values)
add("min_dim_keep", lambda x: x.min(0, keepdim=True)[0], lambda x: x.min(0, keepdims=True),
    inputs(_distinct(3, 4)), lambda x: x.min(0, keepdim=True)[0])
add("sort", lambda x: x.sort(1).values, lambda x: np.sort(x, 1), inputs(_distinct(3, 4)),
    lambda x: x.sort(1).values)
add("sort_descending", lambda x: x.sort(0, descending=True)[0], lambda x: -np.sort(-x, 0),
    inputs(_distinct(3, 4)), lambda x: x.sort(0, descending=True)[0])
add("topk", lambda x: x.topk(2).values, lambda x: -np.sort(-x, 1)[:, :2],
    inputs(_distinct(3, 4)), lambda x: x.topk(2).values)
add("kthvalue", lambda x: x.kthvalue(2, 1).values, lambda x: np.sort(x, 1)[:, 1],
    inputs(_distinct(3, 4)), lambda x: x.kthvalue(2, 1).values)
add("median", lambda x: x.median(), lambda x: np.sort(x.ravel())[(x.size - 1) // 2],
    inputs(_distinct(3, 4)), lambda x: x.median())
add("median_dim", lambda x: x.median(1).values, lambda x: np.sort(x, 1)[:, 1],
    inputs(_distinct(3, 4)), lambda x: x.median(1).values)

add("gather", lambda x, i: x.gather(1, i), lambda x, i: np.take_along_axis(x, i, 1),
    inputs(randn(3, 4), _index(4, 3, 5)), lambda x, i: x.gather(1, i))
add("scatter", lambda x, i, s: x.scatter(1, i, s),
    lambda x, i, s: _scatter(x, i, s, False), inputs(randn(3, 4), lambda r: np.array(
        [[1, 3], [0, 2], [2, 1]]), randn(3, 2)), lambda x, i, s: x.scatter(1, i, s))
add("scatter_add", lambda x, i, s: x.scatter_add(1, i, s),
    lambda x, i, s: _scatter(x, i, s, True), inputs(randn(3, 4), _index(4, 3, 2), randn(3, 2)),
    lambda x, i, s: x.scatter_add(1, i, s))
add("index_select", lambda x, i: x.index_select(0, i), lambda x, i: x[i],
    inputs(randn(3, 4), lambda r: np.array([2, 0, 2])), lambda x, i: x.index_select(0, i))
add("index_add", lambda x, i, s: x.index_add(1, i, s, alpha=2.0),
    lambda x, i, s: _index_add(x, i, s), inputs(randn(3, 4), lambda r: np.array([3, 0, 3]),
                                                 randn(3, 3)),
    lambda x, i, s: x.index_add(1, i, s, alpha=2.0))
add("index_fill", lambda x, i: x.index_fill(1, i, 0.5), lambda x, i: _fill(x, i),
    inputs(randn(3, 4), lambda r: np.array([1, 3])), lambda x, i: x.index_fill(1, i, 0.5))
add("masked_fill", lambda x, m: x.masked_fill(m, -1.0), lambda x, m: np.where(m, -1.0, x),
    inputs(randn(3, 4), lambda r: r.random(4) < 0.5), lambda x, m: x.masked_fill(m, -1.0))
add("masked_select", lambda x, m: x.masked_select(m), lambda x, m: x[np.broadcast_to(m, x.shape)],
    inputs(randn(3, 4), lambda r: np.array([True, False, True, True])),
    lambda x, m: x.masked_select(m))
for k in (-1, 0, 1):
    add(f"tril{k}", lambda x, k=k: x.tril(k), lambda x, k=k: np.tril(x, k),
        inputs(randn(2, 3, 4)), lambda x, k=k: x.tril(k))
    add(f"triu{k}", lambda x, k=k: x.triu(k), lambda x, k=k: np.triu(x, k),
        inputs(randn(3, 4)), lambda x, k=k: x.triu(k))
    add(f"diagonal{k}", lambda x, k=k: x.diagonal(k, 1, 2),
        lambda x, k=k: np.diagonal(x, k, 1, 2), inputs(randn(2, 3, 4)),
        lambda x, k=k: x.diagonal(k, 1, 2))
add("diag_vector", lambda v: v.diag(1), lambda v: np.diag(v, 1), inputs(randn(3)),
    lambda v: v.diag(1))
add("trace", lambda x: x.trace(), lambda x: np.trace(x), inputs(randn(3, 4)),
    lambda x: x.trace())
add("setitem", lambda x, v: _setitem(x, v), lambda x, v: _setitem_ref(x, v),
    inputs(randn(3, 4), randn(4)), None)

add("repeat", lambda x: x.repeat(2, 1, 3), lambda x: np.tile(x, (2, 1, 3)),
    inputs(randn(2, 3)), lambda x: x.repeat(2, 1, 3))
add("repeat_interleave", lambda x: x.repeat_interleave(2, dim=1),
    lambda x: np.repeat(x, 2, 1), inputs(randn(2, 3)), lambda x: x.repeat_interleave(2, 1))
add("roll", lambda x: x.roll((1, -2), (0, 1)), lambda x: np.roll(x, (1, -2), (0, 1)),
    inputs(randn(3, 4)), lambda x: x.roll((1, -2), (0, 1)))
add("flip", lambda x: x.flip(0, 2), lambda x: x[::-1, :, ::-1], inputs(randn(2, 3, 4)),
    lambda x: x.flip(0, 2))
add("expand", lambda x: x.expand(2, 3, -1), lambda x: np.broadcast_to(x, (2, 3, 4)),
    inputs(randn(1, 4)), lambda x: x.expand(2, 3, -1))
add("narrow_chunk", lambda x: x.narrow(1, 1, 2).chunk(2, 0),
    lambda x: tuple(np.array_split(x[:, 1:3], 2, 0)), inputs(randn(4, 4)),
    lambda x: x.narrow(1, 1, 2).chunk(2, 0))

for eq, shapes in [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
                   ("ij->", [(2, 3)]), ("i,j->ij", [(2,), (3,)]), ("ij,ij->i", [(2, 3), (2, 3)]),
                   ("...j,j->...", [(2, 3, 4), (4,)]), ("ijk,k->ij", [(2, 3, 4), (4,)])]:
    add(f"einsum[{eq}]", lambda *xs, e=eq: __import__("lamina").einsum(e, *xs),
        lambda *xs, e=eq: np.einsum(e, *xs), inputs(*[randn(*s) for s in shapes]),
        lambda *xs, e=eq: __import__("torch").einsum(e, *xs))
add("addmm", lambda c, a, b: c.addmm(a, b, beta=0.5, alpha=2.0),
    lambda c, a, b: 0.5 * c + 2.0 * a @ b, inputs(randn(2, 4), randn(2, 3), randn(3, 4)),
    lambda c, a, b: c.addmm(a, b, beta=0.5, alpha=2.0))
add("outer", lambda a, b: a.outer(b), np.outer, inputs(randn(3), randn(4)),
    lambda a, b: a.outer(b))


def _scatter(x, i, s, accumulate):
    out = x.copy()
    for r in range(i.shape[0]):
        for c in range(i.shape[1]):
            if accumulate:
                out[r, i[r, c]] += s[r, c]
            else:
                out[r, i[r, c]] = s[r, c]
    return out


def _index_add(x, i, s):
    out = x.copy()
    for k, col in enumerate(i):
        out[:, col] += 2.0 * s[:, k]
    return out


def _fill(x, i):
    out = x.copy()
    out[:, i] = 0.5
    return out


def _setitem(x, v):
    y = x * 1.0
    y[1] = v
    y[:, 0] = 2.0
    return y


def _setitem_ref(x, v):
    y = x.copy()
    y[1] = v
    y[:, 0] = 2.0
    return y
