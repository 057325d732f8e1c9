"""Winograd's F(2x2, 3x3) convolution (lamina.functions.winograd): where it runs, its
values and gradients are PyTorch's (float64 reference, same inputs and weights) to the
float32 rounding of im2col's product, in eager mode and in a plan, and backward keeps
the input, not a window matrix. A plan's cropped convolution: tests/plan/test_plan_fusion."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from plan_cases import assert_plan_tracks_eager

import lamina as lm
import lamina.fused as fused
from lamina import nn, parallel, thread_pools
from lamina.functions import winograd

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")


@pytest.fixture
def any_size(monkeypatch):
    """Winograd's for small shapes too, whose edge cases (odd sizes, a map one tile wide)
    are what the tests below check; in use it waits for MIN_CHANNELS channels and
    MIN_TILE_CHANNELS tiles times channels, where it pays."""
    monkeypatch.setattr(winograd, "MIN_TILE_CHANNELS", 1)
    monkeypatch.setattr(winograd, "MIN_CHANNELS", 1)


def _arrays(shape, out_channels, seed, channel_major):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    if channel_major:  # as a convolution's output is laid out
        x = np.ascontiguousarray(x.swapaxes(0, 1)).swapaxes(0, 1)
    w = (rng.standard_normal((out_channels, shape[1], 3, 3)) / np.sqrt(9 * shape[1]))
    return x, w.astype(np.float32), rng.standard_normal(out_channels).astype(np.float32)


def _lamina(x, w, b, padding, gy, backend="numba"):
    before = fused.set_backend(backend)
    try:
        xl, wl, bl = (lm.tensor(a, requires_grad=True) for a in (x, w, b))
        y = lm.nn.functional.conv2d(xl, wl, bl, padding=padding)
        ran = y.creator.winograd
        y.backward(lm.tensor(gy))
        return ran, [y.detach().numpy(), xl.grad.numpy(), wl.grad.numpy(), bl.grad.numpy()]
    finally:
        fused.set_backend(before)


def _torch64(x, w, b, padding, gy):
    xt, wt, bt = (torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, w, b))
    y = torch.nn.functional.conv2d(xt, wt, bt, padding=padding)
    y.backward(torch.tensor(gy, dtype=torch.float64))
    return [y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()]


@pytest.mark.parametrize("shape,out_channels,padding,channel_major", [
    ((2, 32, 8, 8), 32, 1, True),
    ((3, 40, 7, 9), 33, 1, False),   # odd sizes: the last tiles are half outside
    ((2, 32, 6, 5), 48, 0, True),    # its input gradient pads by 2
    ((2, 36, 5, 6), 32, 2, False),   # and this one's by 0
    ((1, 32, 3, 3), 32, (0, 2), True),
    ((4, 64, 2, 2), 64, 1, True),    # one tile, mostly padding
])
def test_values_and_gradients_are_pytorchs(shape, out_channels, padding, channel_major,
                                           any_size):
    x, w, b = _arrays(shape, out_channels, 0, channel_major)
    oh = shape[2] + 2 * (padding if isinstance(padding, int) else padding[0]) - 2
    ow = shape[3] + 2 * (padding if isinstance(padding, int) else padding[1]) - 2
    gy = np.random.default_rng(1).standard_normal((shape[0], out_channels, oh, ow))
    gy = gy.astype(np.float32)
    ran, got = _lamina(x, w, b, padding, gy)
    assert ran
    ref = _torch64(x, w, b, padding, gy)
    _, im2col = _lamina(x, w, b, padding, gy, backend="numpy")
    for name, g, r, i in zip(("y", "x grad", "w grad", "b grad"), got, ref, im2col):
        scale = np.abs(r).max()
        # Within a few times im2col's own float32 error, and at most 1e-5 of the scale.
        err, err_im2col = np.abs(g - r).max(), np.abs(i - r).max()
        assert err <= max(4 * err_im2col, 1e-6 * scale), name
        assert err <= 1e-5 * scale, name


@pytest.mark.parametrize("case", ["few channels", "stride 2", "5x5", "float64", "groups",
                                  "few tiles"])
def test_it_runs_only_where_it_applies(case):
    conv = {"few channels": dict(c=32), "stride 2": dict(stride=2), "5x5": dict(k=5),
            "float64": dict(dtype=np.float64), "groups": dict(groups=2),
            "few tiles": dict(n=1)}[case]
    c, k, dtype = conv.pop("c", 64), conv.pop("k", 3), conv.pop("dtype", np.float32)
    n = conv.pop("n", 16)  # a 16x16 map is 64 tiles: 1024 at 64 channels is enough
    x = lm.tensor(np.ones((n, c, 16, 16), dtype), requires_grad=True)
    w = lm.tensor(np.ones((64, c // conv.get("groups", 1), k, k), dtype), requires_grad=True)
    y = lm.nn.functional.conv2d(x, w, padding=1, **conv)
    assert not y.creator.winograd
    # The same call with 64 float32 channels, a 3x3 kernel at stride 1, would.
    x, w = np.ones((16, 64, 16, 16), np.float32), np.ones((64, 64, 3, 3), np.float32)
    assert winograd.applies((1, 1), (1, 1), (1, 1), 1, x, w)
    assert not winograd.applies((1, 1), (1, 1), (1, 1), 1, x[:8], w)  # 512 tiles
    # With 512 channels, 128 tiles are enough (ResNet-18's last stage at batch 32).
    x, w = np.ones((32, 512, 4, 4), np.float32), np.ones((512, 512, 3, 3), np.float32)
    assert winograd.applies((1, 1), (1, 1), (1, 1), 1, x, w)
    assert not winograd.applies((1, 1), (1, 1), (1, 1), 1, x[:8], w)


def test_backward_keeps_the_input_and_no_window_matrix(any_size):
    x, w, b = _arrays((2, 32, 8, 8), 32, 2, True)
    xl, wl = lm.tensor(x, requires_grad=True), lm.tensor(w, requires_grad=True)
    y = lm.nn.functional.conv2d(xl, wl, padding=1)
    kept = [a for a in y.creator.saved_tensors if a is not None]
    # The input and the weight; the window matrix would be 9 times the input.
    assert sorted(a.size for a in kept) == sorted([x.size, w.size])


def test_a_plan_of_winograd_convolutions_tracks_eager_mode(any_size):
    lm.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(32, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                          nn.Conv2d(32, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(32 * 16, 3))
    rng = np.random.default_rng(4)
    x = lm.tensor(rng.standard_normal((4, 3, 8, 8)).astype(np.float32))
    y = lm.tensor(np.array([0, 1, 2, 0]))
    for tune in (False, True):
        plan = lm.plan.compile(model, lm.nn.functional.cross_entropy, (x, y), tune=tune)
        assert_plan_tracks_eager(model, plan, x, y)


def test_random_shapes_agree_with_im2col(any_size):
    """Forty random small geometries (maps of 1 to 8, paddings 0 to 2 per axis, any
    channel counts): Winograd's values and gradients against NumPy's im2col path."""
    rng = np.random.default_rng(7)
    checked = 0
    while checked < 40:
        n, c, o = (int(v) for v in rng.integers(1, 5, 3))
        h, w, ph, pw = (int(v) for v in (*rng.integers(1, 9, 2), *rng.integers(0, 3, 2)))
        if h + 2 * ph < 3 or w + 2 * pw < 3:
            continue
        x, wt, b = _arrays((n, c, h, w), o, checked, bool(checked % 2))
        gy = rng.standard_normal((n, o, h + 2 * ph - 2, w + 2 * pw - 2)).astype(np.float32)
        ran, got = _lamina(x, wt, b, (ph, pw), gy)
        _, want = _lamina(x, wt, b, (ph, pw), gy, backend="numpy")
        assert ran
        for g, r in zip(got, want):
            np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-5 * max(1, np.abs(r).max()))
        checked += 1


@pytest.mark.parametrize("rows", [1, 3, 5])
def test_blocks_of_tiles_give_the_whole_maps_values(rows, any_size, monkeypatch):
    """The forward and the input gradient block by block, the blocks of rows of tiles
    split over two threads (blocks crossing images, the last one partial), against the
    whole map's GEMMs and PyTorch."""
    monkeypatch.setattr(parallel, "MIN_PIECE", 1)  # split even this small map
    before = lm.get_num_threads()
    lm.set_num_threads(2)
    try:
        x, w, b = _arrays((3, 24, 7, 9), 20, 5, True)  # 3 images of 4 rows of 5 tiles
        gy = np.random.default_rng(6).standard_normal((3, 20, 7, 9)).astype(np.float32)
        monkeypatch.setattr(winograd, "_block_rows", lambda tw, total: 0)
        _, whole = _lamina(x, w, b, 1, gy)
        monkeypatch.setattr(winograd, "_block_rows", lambda tw, total: rows)
        ran, blocked = _lamina(x, w, b, 1, gy)
    finally:
        lm.set_num_threads(before)
    assert ran
    ref = _torch64(x, w, b, 1, gy)
    for name, g, r, i in zip(("y", "x grad", "w grad", "b grad"), blocked, ref, whole):
        np.testing.assert_allclose(g, i, rtol=0, atol=1e-6 * np.abs(r).max(), err_msg=name)
        assert np.abs(g - r).max() <= 1e-5 * np.abs(r).max(), name


def _within(monkeypatch, name):
    """The sizes of the planes `_flat` makes while winograd.`name` runs (without their gap),
    and the number of `_gemms` calls it makes."""
    planes, gemms, inside = [], [], []
    real_flat, real_gemms, real = winograd._flat, winograd._gemms, getattr(winograd, name)

    def flat(r, c, dtype):
        a = real_flat(r, c, dtype)
        if inside:
            planes.append(a[:, :r * c].nbytes)
        return a

    def counted(a, b, out=None):
        if inside:
            gemms.append(True)
        return real_gemms(a, b, out=out)

    def watched(*args):
        inside.append(True)
        try:
            return real(*args)
        finally:
            inside.clear()

    monkeypatch.setattr(winograd, "_flat", flat)
    monkeypatch.setattr(winograd, "_gemms", counted)
    monkeypatch.setattr(winograd, name, watched)
    return planes, gemms


@pytest.mark.parametrize("rows", [1, 3, 5])
def test_the_weight_gradient_in_chunks_is_the_whole_maps(rows, any_size, monkeypatch):
    """The weight gradient summed chunk by chunk of tile rows (chunks crossing images,
    the last one partial), its two operands made once, each under CHUNK_BYTES, and
    reused by every chunk, against one chunk of the whole map and PyTorch."""
    x, w, b = _arrays((3, 24, 7, 9), 20, 7, True)  # 3 images of 4 rows of 5 tiles
    gy = np.random.default_rng(8).standard_normal((3, 20, 7, 9)).astype(np.float32)
    _, whole = _lamina(x, w, b, 1, gy)
    budget = rows * 16 * 24 * 5 * 4  # `rows` rows of tiles of the wider operand
    monkeypatch.setattr(winograd, "CHUNK_BYTES", budget)
    planes, gemms = _within(monkeypatch, "weight_grad")
    ran, chunked = _lamina(x, w, b, 1, gy)
    assert ran
    assert len(planes) == 2 and max(planes) <= budget
    assert len(gemms) == -(-12 // rows) + 1  # a chunk's 16 GEMMs, then the transform's
    ref = _torch64(x, w, b, 1, gy)
    np.testing.assert_allclose(chunked[2], whole[2], rtol=0, atol=1e-6 * np.abs(ref[2]).max())
    assert np.abs(chunked[2] - ref[2]).max() <= 1e-5 * np.abs(ref[2]).max()
    for got, want in zip(chunked[:2] + chunked[3:], whole[:2] + whole[3:]):
        np.testing.assert_array_equal(got, want)  # the rest is not chunked


@pytest.mark.parametrize("rows", [1, 3, 5])
def test_maps_not_in_blocks_go_in_chunks(rows, any_size, monkeypatch):
    """Where the forward and the input gradient do not go by blocks, they go chunk by
    chunk of tile rows, their operands made once and under CHUNK_BYTES: the same values
    as one chunk of the whole map, and PyTorch's."""
    x, w, b = _arrays((3, 24, 7, 9), 20, 9, True)  # 3 images of 4 rows of 5 tiles
    gy = np.random.default_rng(10).standard_normal((3, 20, 7, 9)).astype(np.float32)
    monkeypatch.setattr(winograd, "_block_rows", lambda tw, total: 0)
    _, whole = _lamina(x, w, b, 1, gy)
    budget = rows * 16 * 24 * 5 * 4
    monkeypatch.setattr(winograd, "CHUNK_BYTES", budget)
    planes, gemms = _within(monkeypatch, "convolve")
    ran, chunked = _lamina(x, w, b, 1, gy)
    assert ran
    assert len(planes) == 4 and max(planes) <= budget  # the forward's two, the input grad's
    assert len(gemms) == 2 * -(-12 // rows)
    ref = _torch64(x, w, b, 1, gy)
    for name, g, r, i in zip(("y", "x grad"), chunked, ref, whole):
        np.testing.assert_allclose(g, i, rtol=0, atol=1e-6 * np.abs(r).max(), err_msg=name)
        assert np.abs(g - r).max() <= 1e-5 * np.abs(r).max(), name


def test_blocks_hold_their_tiles(monkeypatch):
    """A block holds BLOCK_TILES tiles (a row of tiles at least), on maps of four blocks
    or more (ResNet-18's first two stages at batch 32, not its last two); maps go in
    chunks where BLAS cannot be held to one thread."""
    monkeypatch.setattr(thread_pools, "blas_limitable", lambda: True)
    for tw, total in ((16, 512), (8, 256), (28, 32 * 28)):
        rows = winograd._block_rows(tw, total)
        assert rows == winograd.BLOCK_TILES // tw and 4 * rows <= total
    assert winograd._block_rows(winograd.BLOCK_TILES * 2, 4) == 1  # a row longer than a block
    for tw, total in ((4, 128), (2, 64), (16, 60)):
        assert winograd._block_rows(tw, total) == 0
    monkeypatch.setattr(thread_pools, "blas_limitable", lambda: False)
    assert winograd._block_rows(16, 512) == 0


def test_blocks_run_their_gemms_on_one_blas_thread(monkeypatch):
    """The threads' block GEMMs run with BLAS on one thread, so that they go side by side
    rather than each over both cores (a BLAS threads a GEMM from a size of its own), and
    BLAS has its threads back after."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    if not thread_pools.blas_limitable():
        pytest.skip("threadpoolctl finds no BLAS to limit")

    def blas_threads():  # NumPy's BLAS (numba may have loaded SciPy's too)
        return {i["num_threads"] for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas" and "numpy" in i["filepath"]}

    seen, gemms = [], winograd._gemms

    def counted(a, b, out=None):
        seen.append(blas_threads())
        return gemms(a, b, out=out)

    monkeypatch.setattr(winograd, "_gemms", counted)
    monkeypatch.setattr(winograd, "BLOCK_TILES", 32)  # blocks of 4 rows: 4 of them
    x, w, _ = _arrays((2, 64, 16, 16), 64, 7, True)
    u, before = winograd.weights(w), blas_threads()
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        outside = blas_threads()
        seen.clear()
        winograd.convolve(x.transpose(1, 0, 2, 3), u, (1, 1),
                          np.empty((64, 2, 16, 16), np.float32))
        assert blas_threads() == outside == {2}
    assert blas_threads() == before
    assert winograd._block_rows(8, 16) > 0 and seen and all(s == {1} for s in seen)
