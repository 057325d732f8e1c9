"""Generic checks crossed with every entry of the op case table (tests/op_cases.py)."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES, Case
from op_graph import inputs_kept_whole, recorded_ops, undeclared

import lamina as lm
import lamina.functions as F


def _tensors(arrays, dtype=None, requires_grad=True):
    out = []
    for a in arrays:
        if a.dtype.kind == "f":
            a = a.astype(dtype) if dtype else a
            out.append(lm.tensor(a, requires_grad=requires_grad))
        else:
            out.append(lm.tensor(a))
    return out


def _outs(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _inputs(case: Case):
    return case.make(np.random.default_rng(abs(hash(case.name)) % 2**32))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_forward_matches_reference(case: Case) -> None:
    arrays = _inputs(case)
    got = _outs(case.fn(*_tensors(arrays, requires_grad=False)))
    want = _outs(case.ref(*arrays))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == np.shape(w)
        np.testing.assert_allclose(g.array, w, rtol=case.rtol, atol=case.atol)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_gradients_match_central_differences(case: Case) -> None:
    assert lm.gradcheck(case.fn, _tensors(_inputs(case)), atol=case.grad_atol)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_float32_keeps_dtype_and_gradient_shapes(case: Case) -> None:
    arrays = _inputs(case)
    xs = _tensors(arrays, dtype=np.float32)
    ys = _outs(case.fn(*xs))
    for y, w in zip(ys, _outs(case.ref(*arrays))):
        assert y.dtype == np.float32
        np.testing.assert_allclose(y.array, w, rtol=1e-4, atol=1e-4)
    sum(((y * 1.0).sum() for y in ys), lm.tensor(0.0)).backward()
    for x in xs:
        if x.requires_grad:
            assert x.grad is not None, "a float input got no gradient"
            assert x.grad.shape == x.shape and x.grad.dtype == np.float32


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_no_graph_under_no_grad(case: Case) -> None:
    """No graph, and the same values: an op may skip what only backward needs (max
    pooling's index) when no input wants a gradient."""
    xs = _tensors(_inputs(case))
    lm.manual_seed(0)
    want = [y.array for y in _outs(case.fn(*xs))]
    lm.manual_seed(0)
    with lm.no_grad():
        ys = _outs(case.fn(*xs))
    assert all(y.creator is None and not y.requires_grad for y in ys)
    assert all(isinstance(w, np.ndarray) for w in want)  # never a NumPy scalar
    for y, w in zip(ys, want):
        np.testing.assert_array_equal(y.array, w)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_inputs_and_incoming_gradients_are_left_alone(case: Case) -> None:
    """Neither forward nor backward writes into its inputs or the gradient it is given:
    eager backward hands one gradient array to several ops (an add passes its gy to
    both inputs), so one op scaling it in place would corrupt its neighbours'."""
    xs = _tensors(_inputs(case))
    before = [x.array.copy() for x in xs]
    ys = [y for y in _outs(case.fn(*xs)) if y.requires_grad]
    rng = np.random.default_rng(1)
    gys = [rng.standard_normal(y.shape).astype(y.dtype) for y in ys]
    given = [g.copy() for g in gys]
    for i, (y, g) in enumerate(zip(ys, gys)):
        y.backward(g, retain_graph=i + 1 < len(ys))
    for x, b in zip(xs, before):
        np.testing.assert_array_equal(x.array, b)
    for g, b in zip(gys, given):
        np.testing.assert_array_equal(g, b)


def _strided(a: np.ndarray) -> np.ndarray:
    """a's values in a non-contiguous array: every other element of a larger one, axes
    stored in reverse order."""
    if a.ndim == 0:
        return a
    wide = np.zeros(a.shape[::-1][:-1] + (2 * a.shape[0],), a.dtype)
    view = wide[..., ::2].transpose()
    view[...] = a
    return view


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_strided_inputs_give_the_same_results(case: Case) -> None:
    """Views (a transpose, a slice with a step) are inputs like any other: an op that
    assumed contiguous memory (as_strided windows, reshapes, out= buffers) would differ."""
    arrays = _inputs(case)
    results = []
    for make in (lambda a: a, _strided):
        # Tensor(), not lm.tensor(): a copy would make the view contiguous again.
        xs = [lm.Tensor(make(a), requires_grad=a.dtype.kind == "f") for a in arrays]
        assert make is not _strided or all(x.array.size < 2 or not x.array.flags.c_contiguous
                                           for x in xs)
        ys = [y for y in _outs(case.fn(*xs)) if y.requires_grad]
        sum(((y * y).sum() for y in ys), lm.tensor(0.0, dtype=np.float64)).backward()
        results.append([y.array for y in ys] + [x.grad for x in xs if x.requires_grad])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_backward_releases_saved_arrays(case: Case) -> None:
    xs = _tensors(_inputs(case))
    ys = _outs(case.fn(*xs))
    creators = {y.creator for y in ys if y.creator is not None}
    sum((y.sum() for y in ys), lm.tensor(0.0, dtype=ys[0].dtype)).backward()
    for f in creators:
        assert f.released
        assert not hasattr(f, "inputs") and f.saved_tensors == ()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_ops_declare_every_input_and_output_they_keep(case: Case) -> None:
    """An op keeping an input's or output's memory past forward lists it in save_for_backward:
    the version check and a plan's liveness know only what is declared."""
    with inputs_kept_whole():
        ys = case.fn(*_tensors(_inputs(case)))
    for op, outs in recorded_ops(ys):
        assert undeclared(op, [x.array for x in op.inputs] + outs) == [], op.name


@pytest.mark.parametrize("op", [
    lambda x: F.gelu(x), lambda x: F.gelu(x, "tanh"), lambda x: F.layer_norm(x, 3),
    lambda x: F.batch_norm(x, None, None, training=True)], ids=["gelu", "gelu_tanh",
                                                                   "layer_norm", "batch_norm"])
def test_ops_with_float_constants_compute_integers_in_float64(op) -> None:
    """These ops take constants or statistics in the input's dtype, so integers must not
    reach them: they truncated to 0 (every GELU output 0, batch norm all 0)."""
    ints = op(lm.tensor(np.array([[-1, 0, 2], [4, 6, 9]])))
    floats = op(lm.tensor(np.array([[-1.0, 0.0, 2.0], [4.0, 6.0, 9.0]])))
    assert ints.dtype == np.float64
    np.testing.assert_array_equal(ints.array, floats.array)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32])
@pytest.mark.parametrize("low,high", [(0, np.inf), (-np.inf, 0), (-1, 2)])
def test_clamp_equals_maximum_and_minimum(dtype, low, high) -> None:
    """clamp takes np.clip's faster loop for large float32/64 arrays: same values, NaN
    kept, dtype kept, written into `out` when given, for every dtype and size."""
    from lamina.functions.activation import clamp

    x = np.array([-3, -1, 0, 1, 2, 5], dtype)
    if x.dtype.kind == "f":
        x = np.append(x, np.array([np.nan, -np.inf, np.inf], dtype))
    for a in (x, np.tile(x, 500)):  # small arrays keep maximum/minimum; large ones clip
        want = np.minimum(np.maximum(a, low), high).astype(dtype)
        out = np.empty_like(a)
        got = clamp(a, low, high, out=out)
        assert got is out and got.dtype == a.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(clamp(a, low, high), want)


def _channel_major(a: np.ndarray) -> np.ndarray:
    """a's values in memory ordered (C, N, ...), as a convolution writes its output."""
    return np.ascontiguousarray(np.moveaxis(a, 1, 0)).swapaxes(0, 1)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("layout", ["channel_major", "reversed"])
def test_batch_norm_equal_in_every_memory_layout(training, layout) -> None:
    """batch_norm works on channel-major memory in place of sample-major rows; results,
    gradients and running statistics are the same for every layout."""
    from lamina.functions.normalization import _Channels

    rng = np.random.default_rng(3)
    x, gy = rng.standard_normal((2, 3, 4, 5)) * 2 + 1, rng.standard_normal((4, 5, 3, 2))
    gy = gy.transpose(3, 2, 0, 1)  # the gradient in yet another layout
    make = _channel_major if layout == "channel_major" else (lambda a: a.transpose(0, 1, 3, 2)
                                                             .copy().swapaxes(2, 3))
    assert _Channels(make(x)).first == (layout == "channel_major")  # rows without a copy
    results = []
    for arrays in ((x, gy), (make(x), gy)):
        assert arrays[0].flags.c_contiguous == (len(results) == 0)
        stats = [np.zeros(3), np.ones(3)]
        xt = lm.Tensor(arrays[0], requires_grad=True)
        g = lm.tensor(np.array([1.5, -1.0, 2.0]), requires_grad=True)
        b = lm.tensor(np.array([0.1, 0.2, 0.3]), requires_grad=True)
        y = F.batch_norm(xt, *stats, g, b, training=training)
        y.backward(lm.Tensor(arrays[1]))
        results.append([y.array, xt.grad, g.grad, b.grad, *stats])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
