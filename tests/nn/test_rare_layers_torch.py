"""The last of torch.nn's modules: fractional max pooling, the legacy CrossMapLRN2d and
the deprecated Container, each against PyTorch (values, indices, gradients, reprs,
warnings and errors)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
import lamina.nn.functional as F

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(0)

FRACTIONAL = [  # (nd, input shape, kernel, output_size, output_ratio, dtype)
    (2, (2, 3, 9, 11), 2, (5, 4), None, np.float32),
    (2, (1, 2, 7, 7), 3, (4, 5), None, np.float64),
    (2, (2, 1, 10, 10), (2, 3), None, (0.6, 0.5), np.float32),
    (2, (3, 8, 9), 2, 4, None, np.float32),  # unbatched
    (3, (2, 2, 6, 7, 8), 2, (3, 4, 5), None, np.float32),
    (3, (1, 1, 9, 6, 7), (3, 2, 2), None, 0.5, np.float64),
]


@pytest.mark.parametrize("nd,shape,kernel,size,ratio,dtype", FRACTIONAL)
def test_fractional_max_pool_gives_pytorchs_values_indices_and_gradients(
        nd, shape, kernel, size, ratio, dtype):
    x = RNG.standard_normal(shape).astype(dtype)
    n = 1 if len(shape) == nd + 1 else shape[0]
    u = RNG.random((n, shape[-nd - 1], nd)).astype(dtype)
    results = []
    for lib in (torch, lm):
        xt = lib.tensor(x, requires_grad=True)
        pool = getattr(lib.nn, f"FractionalMaxPool{nd}d")(
            kernel, output_size=size, output_ratio=ratio, return_indices=True,
            _random_samples=lib.tensor(u))
        y, idx = pool(xt)
        (y * lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(dtype))
         ).sum().backward()
        results.append((y.detach().numpy(), idx.numpy(), xt.grad.numpy()))
    (y, idx, g), (yl, idxl, gl) = results[0], results[1]
    np.testing.assert_array_equal(yl, y)
    np.testing.assert_array_equal(idxl, idx)
    np.testing.assert_allclose(gl, g, rtol=1e-6, atol=1e-7)


def test_fractional_max_pool_draws_from_lamina_s_generator():
    x = lm.randn(2, 3, 9, 9)
    lm.manual_seed(4)
    a = F.fractional_max_pool2d(x, 2, output_size=5)
    b = F.fractional_max_pool2d(x, 2, output_size=5)
    lm.manual_seed(4)
    c = F.fractional_max_pool2d(x, 2, output_size=5)
    assert np.array_equal(a.numpy(), c.numpy()) and not np.array_equal(a.numpy(), b.numpy())


def test_fractional_max_pool_refuses_what_pytorch_refuses():
    for lib in (torch, lm):
        with pytest.raises(ValueError, match="output size, or a pooling ratio"):
            lib.nn.FractionalMaxPool2d(2)
        with pytest.raises(ValueError, match="output_ratio must be between 0 and 1"):
            lib.nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(lm.ShapeError, match="too large for input"):
        F.fractional_max_pool2d(lm.randn(1, 1, 4, 4), 3, output_size=3)
    assert repr(nn.FractionalMaxPool3d(2, output_size=2)) == "FractionalMaxPool3d()"


@pytest.mark.parametrize("size,channels", [(2, 3), (3, 6), (4, 1), (5, 9), (7, 4)])
def test_cross_map_lrn2d_gives_pytorchs_values_and_gradients(size, channels):
    """PyTorch's legacy op, quirks included: its window keeps channel 0, and its
    gradient is not its forward's derivative; lamina's gives the same numbers."""
    x = RNG.standard_normal((2, channels, 3, 2))
    gy = RNG.standard_normal(x.shape)
    results = []
    for lib in (torch, lm):
        xt = lib.tensor(x, requires_grad=True)
        layer = lib.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.75, k=1.5)
        y = layer(xt)
        y.backward(lib.tensor(gy))
        results.append((y.detach().numpy(), xt.grad.numpy(), repr(layer)))
    (y, g, r), (yl, gl, rl) = results
    np.testing.assert_allclose(yl, y, rtol=1e-13)
    np.testing.assert_allclose(gl, g, rtol=1e-12, atol=1e-14)
    assert rl == r


def test_cross_map_lrn2d_refuses_what_pytorch_refuses():
    for lib in (torch, lm):
        with pytest.raises(ValueError, match="Expected input to be 4D, got 3D instead"):
            lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 3))
        y = lib.nn.CrossMapLRN2d(1)(lib.ones(1, 2, 2, 2, requires_grad=True))
        with pytest.raises(RuntimeError):  # PyTorch's backward fails at size 1: so does ours
            y.sum().backward()


def test_container_warns_and_prints_as_pytorchs():
    reprs = []
    for lib in (torch, lm):
        with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
            c = lib.nn.Container(act=lib.nn.ReLU(), fc=lib.nn.Linear(2, 3))
        reprs.append(repr(c))
        assert [n for n, _ in c.named_children()] == ["act", "fc"]
    assert reprs[0] == reprs[1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.Module()  # the warning is Container's own


def test_functional_names_pytorch_has_for_these_ops():
    x = RNG.standard_normal((1, 2, 7, 7)).astype(np.float32)
    u = RNG.random((1, 2, 2)).astype(np.float32)
    got = [lib.nn.functional.fractional_max_pool2d_with_indices(
        lib.tensor(x), 2, 4, _random_samples=lib.tensor(u)) for lib in (torch, lm)]
    for a, b in zip(*got):
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    v = np.arange(12.0).reshape(1, 6, 2)
    np.testing.assert_array_equal(F.native_channel_shuffle(lm.tensor(v), 3).numpy(),
                                  torch.nn.functional.native_channel_shuffle(
                                      torch.tensor(v), 3).numpy())
