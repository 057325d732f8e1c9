"""Max pooling's return_indices and max unpooling against PyTorch: the same indices (ties,
NaN, padding, ceil_mode, dilation, unbatched input), the same unpooled values and input
gradients in float64, the same errors, and the layers from their configs."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn

torch = pytest.importorskip("torch")

POOLS = [  # (nd, input shape, pooling arguments, unpooling's output_size)
    (2, (2, 3, 7, 7), dict(kernel_size=3, stride=2, padding=1), (7, 7)),
    (2, (2, 3, 7, 7), dict(kernel_size=3, stride=2, ceil_mode=True), None),
    (2, (2, 3, 8, 6), dict(kernel_size=2), None),
    (2, (3, 5, 5), dict(kernel_size=2), (5, 5)),  # unbatched, an odd size given back
    (1, (2, 3, 9), dict(kernel_size=3, stride=2, dilation=2), None),
    (1, (2, 3, 9), dict(kernel_size=2), [2, 3, 9]),  # the full shape, as PyTorch takes it
    (3, (1, 2, 4, 5, 4), dict(kernel_size=2, ceil_mode=True), None),
]


def _input(shape, seed=0):
    x = np.random.default_rng(seed).integers(0, 4, shape).astype(np.float64)  # many ties
    x.reshape(-1)[[1, 5, 9]] = np.nan
    return x


@pytest.mark.parametrize("nd,shape,kw,size", POOLS)
def test_indices_are_pytorchs(nd, shape, kw, size) -> None:
    x = _input(shape)
    yt, it = getattr(torch.nn.functional, f"max_pool{nd}d")(torch.tensor(x),
                                                             return_indices=True, **kw)
    yl, il = getattr(lm.nn.functional, f"max_pool{nd}d")(lm.tensor(x), return_indices=True,
                                                          **kw)
    np.testing.assert_array_equal(yl.numpy(), yt.numpy())
    np.testing.assert_array_equal(il.numpy(), it.numpy())
    assert il.dtype == lm.int64


@pytest.mark.parametrize("nd,shape,kw,size", POOLS)
def test_unpooling_and_its_gradients_are_pytorchs(nd, shape, kw, size) -> None:
    x = np.random.default_rng(1).standard_normal(shape)
    outs = []
    for t in (torch, lm):
        xt = t.tensor(x, requires_grad=True)
        y, i = getattr(t.nn.functional, f"max_pool{nd}d")(xt, return_indices=True, **kw)
        unpool_kw = {k: v for k, v in kw.items() if k in ("kernel_size", "stride", "padding")}
        u = getattr(t.nn.functional, f"max_unpool{nd}d")(y * 2, i, output_size=size,
                                                          **unpool_kw)
        u.backward(t.tensor(np.random.default_rng(2).standard_normal(tuple(u.shape))))
        outs.append((u.detach().numpy(), xt.grad.numpy()))
    for ours, theirs in zip(outs[1], outs[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_layers_pool_and_unpool_as_pytorchs_and_round_trip_their_configs() -> None:
    x = np.random.default_rng(3).standard_normal((2, 3, 6, 6))
    theirs = (torch.nn.MaxPool2d(2, return_indices=True), torch.nn.MaxUnpool2d(2))
    ours = (nn.MaxPool2d(2, return_indices=True), nn.MaxUnpool2d(2))
    ut = theirs[1](*theirs[0](torch.tensor(x)))
    ul = ours[1](*ours[0](lm.tensor(x)))
    np.testing.assert_array_equal(ul.numpy(), ut.numpy())
    for layer in ours:
        again = nn.from_config(layer.to_config())
        assert type(again) is type(layer) and again.get_config() == layer.get_config()
    assert "return_indices=True" in repr(ours[0])


@pytest.mark.parametrize("case", ["index too large", "negative index", "output_size",
                                  "output_size length", "indices shape"])
def test_bad_input_raises_as_pytorch_does(case) -> None:
    y = np.ones((1, 1, 2, 2))
    i = np.array([[[[0, 3], [8, 10]]]])
    kw = dict(kernel_size=2)
    if case == "index too large":
        i[0, 0, 1, 1], error = 16, (RuntimeError, IndexError)
    elif case == "negative index":
        i[0, 0, 0, 0], error = -1, (RuntimeError, IndexError)
    elif case == "output_size":
        kw["output_size"], error = (7, 4), (ValueError,)
    elif case == "output_size length":
        kw["output_size"], error = (4,), (ValueError,)
    else:
        i, error = i[..., :1], (RuntimeError, ValueError)
    with pytest.raises(error):
        torch.nn.functional.max_unpool2d(torch.tensor(y), torch.tensor(i), **kw)
    with pytest.raises(error, match="max_unpool2d"):
        lm.nn.functional.max_unpool2d(lm.tensor(y), lm.tensor(i), **kw)


@pytest.mark.parametrize("nd,shape,size", [(2, (1, 1, 4, 4), 2), (2, (2, 3, 7, 5), (3, None)),
                                           (1, (2, 3, 9), 4), (2, (3, 7, 6), (2, 4))])
def test_adaptive_max_pooling_picks_pytorchs_element(nd, shape, size) -> None:
    """Ties give the whole gradient to the first maximum (not shared, as amax's is), NaN
    to the last NaN; return_indices gives the same indices."""
    x = np.random.default_rng(4).integers(0, 3, shape).astype(np.float64)
    x.reshape(-1)[[2, 7]] = np.nan
    gy = None
    outs = []
    for t in (torch, lm):
        xt = t.tensor(x, requires_grad=True)
        y, i = getattr(t.nn.functional, f"adaptive_max_pool{nd}d")(xt, size, return_indices=True)
        gy = np.random.default_rng(5).standard_normal(tuple(y.shape)) if gy is None else gy
        y.backward(t.tensor(gy))
        outs.append((y.detach().numpy(), i.numpy(), xt.grad.numpy()))
    for ours, theirs in zip(outs[1], outs[0]):
        np.testing.assert_array_equal(ours, theirs)
    layer = getattr(nn, f"AdaptiveMaxPool{nd}d")(size, return_indices=True)
    np.testing.assert_array_equal(layer(lm.tensor(x))[1].numpy(), outs[0][1])
    assert nn.from_config(layer.to_config()).get_config() == layer.get_config()


class _Unpooling(nn.Module):
    """Pooling whose indices a later unpooling reads, as SegNet's encoder and decoder do."""

    def __init__(self):
        super().__init__()
        self.conv, self.pool = nn.Conv2d(3, 4, 3, padding=1), nn.MaxPool2d(2, return_indices=True)
        self.mid, self.unpool = nn.Conv2d(4, 4, 3, padding=1), nn.MaxUnpool2d(2)
        self.head = nn.Conv2d(4, 3, 1)

    def forward(self, x):
        y, i = self.pool(self.conv(x).relu())
        return self.head(self.unpool(self.mid(y), i)).mean(dim=(2, 3))


def test_a_plan_replays_indices_that_change_with_the_batch() -> None:
    """The indices are traced ops, not arrays fixed at the example batch."""
    from plan_cases import assert_plan_tracks_eager

    lm.manual_seed(0)
    model, rng = _Unpooling(), np.random.default_rng(6)
    batches = [lm.tensor(rng.standard_normal((4, 3, 8, 8)).astype(np.float32)) for _ in "ab"]
    y = lm.tensor(np.array([0, 1, 2, 0]))
    plan = lm.plan.compile(model, lm.nn.functional.cross_entropy, (batches[0], y))
    for x in batches:
        assert_plan_tracks_eager(model, plan, x, y)
