"""lamina.fused: the numba kernels and their NumPy fallback give the same results to float32
rounding, match PyTorch, keep their machine code on disk, and stay out of `import lamina`."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import lamina as lm
import lamina.functions as F
import lamina.fused as fused
from lamina.fused import mkl_blas, numpy_blas

needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                 reason="numba is not installed (pip install 'lamina[fast]')")


@pytest.fixture(params=[pytest.param("numba", marks=needs_numba), "numpy"])
def backend(request):
    before = fused.set_backend(request.param)
    yield request.param
    fused.set_backend(None)
    assert fused.backend() == before


def _gelu_inputs(size=300_001):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(size) * 3).astype(np.float32)
    x[:5] = [0.0, -0.0, 12.0, -12.0, 1e-6]
    return x, rng.standard_normal(size).astype(np.float32)


@needs_numba
def test_gelu_kernels_agree_with_each_other_to_float32_rounding():
    x, gy = _gelu_inputs()
    out = {}
    for name in fused.BACKENDS:
        fused.set_backend(name)
        y, d = _gelu_and_derivative(x)
        out[name] = (y, d, fused.gelu_backward(d, gy), fused.gelu_grad(x, gy))
    fused.set_backend(None)
    for a, b in zip(out["numba"], out["numpy"]):
        # x reaches 12 here, where float32's spacing is 1e-6.
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=5e-7)


def _gelu_and_derivative(x):
    """(gelu(x), its derivative) by the forward kernel a plan's BiasGELU runs; the values
    must be the eager op's own (`fused.gelu`) bit for bit."""
    y, d = np.empty_like(x), np.empty_like(x)
    fused.kernels().gelu_forward(x, y, d)
    np.testing.assert_array_equal(fused.gelu(x), y)
    return y, d


def test_gelu_and_its_derivative_are_within_the_formulas_error_of_the_exact_ones(backend):
    from scipy.special import erf

    x, gy = _gelu_inputs()
    y, d = _gelu_and_derivative(x)
    x64 = x.astype(np.float64)
    phi = 0.5 * (1 + erf(x64 / np.sqrt(2)))
    # Abramowitz & Stegun 7.1.26: 1.5e-7 on erf, 7.5e-8 on Phi, plus float32 rounding.
    assert np.all(np.abs(y - x64 * phi) <= 4e-7 * np.maximum(np.abs(x64), 1))
    exact = phi + x64 * np.exp(-x64 * x64 / 2) / np.sqrt(2 * np.pi)
    assert np.abs(d - exact).max() < 1e-6
    assert abs(d[0] - 0.5) < 2e-7 and d[2] == 1.0 and abs(d[3]) < 1e-30
    np.testing.assert_array_equal(fused.gelu_backward(d, gy), gy * d)
    # the eager op's backward makes the derivative again from x: the same to rounding
    np.testing.assert_allclose(fused.gelu_grad(x, gy), gy * d, rtol=1e-6, atol=1e-7)


@pytest.mark.torch
def test_gelu_values_and_gradients_match_pytorch(backend):
    torch = pytest.importorskip("torch")
    x, gy = _gelu_inputs()
    x, gy = x.reshape(1, 300_001), gy.reshape(1, 300_001)
    xt = torch.tensor(x, requires_grad=True)
    torch.nn.functional.gelu(xt).backward(torch.tensor(gy))
    xl = lm.tensor(x, requires_grad=True)
    yl = F.gelu(xl)
    yl.backward(lm.tensor(gy))
    np.testing.assert_allclose(yl.detach().numpy(), torch.nn.functional.gelu(xt).detach().numpy(),
                               rtol=1e-5, atol=3e-6)
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=3e-6)


def test_gelu_of_a_strided_float32_array_and_of_float64_stay_exact_paths(backend):
    from scipy.special import erf

    x = np.linspace(-4, 4, 64, dtype=np.float64).reshape(8, 8)
    y = F.gelu(lm.tensor(x)).numpy()  # float64: exact erf, for gradient checks
    np.testing.assert_allclose(y, x * 0.5 * (1 + erf(x / np.sqrt(2))), rtol=1e-14, atol=0)
    x32 = x.astype(np.float32).T  # not C-contiguous: the op's own NumPy code
    np.testing.assert_allclose(F.gelu(lm.tensor(x32)).numpy(), y.T, rtol=2e-6, atol=2e-7)


def _update_run(opt_name, backend_name, steps=5, **kw):
    fused.set_backend(backend_name)
    rng = np.random.default_rng(1)
    p = lm.nn.Parameter(lm.tensor(rng.standard_normal((300, 700)).astype(np.float32)))
    opt = getattr(lm.optim, opt_name)([p], lr=1e-2, **kw)
    for s in range(steps):
        p.grad = lm.tensor(rng.standard_normal(p.shape).astype(np.float32) * (s + 1))
        opt.step()
    fused.set_backend(None)
    return p.detach().numpy(), opt.state[p]


@needs_numba
@pytest.mark.parametrize("opt_name,kw", [("Adam", {}), ("Adam", {"weight_decay": 0.1}),
                                         ("AdamW", {"weight_decay": 0.1}),
                                         ("Adam", {"maximize": True, "betas": (0.8, 0.9)}),
                                         ("SGD", {}),
                                         ("SGD", {"momentum": 0.9, "weight_decay": 5e-4}),
                                         ("SGD", {"momentum": 0.9, "dampening": 0.3}),
                                         ("SGD", {"momentum": 0.8, "nesterov": True,
                                                  "maximize": True})])
def test_fused_update_agrees_with_the_numpy_update(opt_name, kw, monkeypatch):
    # NumPy's passes, not a BLAS's axpby, which SGD takes without numba: MKL's where an
    # earlier test loaded it, else NumPy's OpenBLAS's (tests/optim/test_sgd_mkl.py and
    # test_sgd_openblas.py hold those to PyTorch's)
    monkeypatch.setattr(mkl_blas, "ready", lambda: False)
    monkeypatch.setattr(numpy_blas, "available", lambda: False)
    p1, s1 = _update_run(opt_name, "numba", **kw)
    p2, s2 = _update_run(opt_name, "numpy", **kw)
    np.testing.assert_allclose(p1, p2, rtol=1e-5, atol=1e-6)
    if opt_name == "SGD":  # exact operations in NumPy's order: the same bits
        np.testing.assert_array_equal(p1, p2)
        assert ("momentum_buffer" in s1) == ("momentum_buffer" in s2) == ("momentum" in kw)
        if "momentum" in kw:
            np.testing.assert_allclose(s1["momentum_buffer"], s2["momentum_buffer"],
                                       rtol=1e-5, atol=1e-6)
        return
    assert s1["step"] == s2["step"] == 5
    np.testing.assert_allclose(s1["exp_avg"], s2["exp_avg"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s1["exp_avg_sq"], s2["exp_avg_sq"], rtol=1e-5, atol=1e-6)


@needs_numba
@pytest.mark.torch
@pytest.mark.parametrize("opt_name,kw", [("Adam", {"betas": (0.9, 0.95)}),
                                         ("AdamW", {"betas": (0.9, 0.95)}),
                                         ("SGD", {"momentum": 0.9}),
                                         ("SGD", {"momentum": 0.9, "dampening": 0.3})])
def test_fused_update_matches_pytorch(opt_name, kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    w = rng.standard_normal((300, 700)).astype(np.float32)
    grads = [rng.standard_normal(w.shape).astype(np.float32) for _ in range(5)]
    pl, pt = lm.nn.Parameter(lm.tensor(w)), torch.nn.Parameter(torch.tensor(w))
    ol = getattr(lm.optim, opt_name)([pl], lr=1e-2, weight_decay=0.1, **kw)
    ot = getattr(torch.optim, opt_name)([pt], lr=1e-2, weight_decay=0.1, **kw)
    assert fused.backend() == "numba"
    for g in grads:
        pl.grad, pt.grad = lm.tensor(g), torch.tensor(g)
        ol.step()
        ot.step()
        # the first step too: its buffer takes the whole gradient, dampening aside
        np.testing.assert_allclose(pl.detach().numpy(), pt.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
    if opt_name == "SGD":
        np.testing.assert_allclose(ol.state[pl]["momentum_buffer"],
                                   ot.state[pt]["momentum_buffer"].numpy(), rtol=1e-5,
                                   atol=1e-6)
        # Every step ran the kernel's one pass, the first too: no scratch array of the
        # parameter's size is left held for the process's life.
        assert ol._scratch == {}


def test_backend_names_are_checked(monkeypatch):
    with pytest.raises(ValueError, match="expected one of"):
        fused.set_backend("cuda")
    monkeypatch.setenv("LAMINA_FUSED", "llvm")
    with pytest.raises(ValueError, match="LAMINA_FUSED must be one of"):
        fused.set_backend(None)  # reads the environment again
    monkeypatch.setenv("LAMINA_FUSED", "numpy")
    fused.set_backend(None)
    assert fused.backend() == "numpy" and fused.compiled() is None
    assert fused.kernels().__name__ == "lamina.fused.numpy_kernels"
    monkeypatch.delenv("LAMINA_FUSED")
    fused.set_backend(None)
    assert fused.backend() == ("numba" if importlib.util.find_spec("numba") else "numpy")


def _python(code, **env):
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, **env}, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


@needs_numba
@pytest.mark.slow
def test_compiled_kernels_are_cached_on_disk_for_the_next_process(tmp_path):
    code = ("import json, numpy as np, lamina.fused as f\n"
            "from lamina.fused import numba_kernels as k\n"
            "f.gelu(np.ones(10, np.float32))\n"
            "s = k.gelu_values.stats\n"
            "print(json.dumps([s.cache_hits.total(), s.cache_misses.total()]))")
    first = json.loads(_python(code, NUMBA_CACHE_DIR=str(tmp_path)))
    second = json.loads(_python(code, NUMBA_CACHE_DIR=str(tmp_path)))
    assert first == [0, 1]  # compiled, then written to tmp_path
    assert second == [1, 0]  # loaded, not compiled
    assert any(p.suffix == ".nbc" for p in tmp_path.rglob("*"))


def test_import_lamina_loads_no_numba_and_a_missing_numba_falls_back():
    out = _python("import sys, lamina, lamina.fused as f\n"
                  "print('numba' in sys.modules, 'scipy' in sys.modules)")
    assert out.strip() == "False False"  # each costs tens of MB a process may never use
    out = _python("import sys; sys.modules['numba'] = None  # as if not installed\n"
                  "import numpy as np, lamina.fused as f\n"
                  "y = f.gelu(np.array([0.0, 1.0], np.float32))\n"
                  "print(f.backend(), y[1].round(4))\n"
                  "try:\n    f.set_backend('numba')\nexcept ImportError as e:\n    print(e)")
    assert out.splitlines()[0] == "numpy 0.8413"
    assert "pip install 'lamina[fast]'" in out


@needs_numba
def test_an_mlps_step_loads_no_numba_and_uses_it_once_loaded():
    """ReLU, SGD's update and the loss's log-softmax do not load numba on their own (an
    MLP's step, in a fresh process), and use its kernels once another op has: the mask
    ReLU keeps is then the compiled kernel's, in the same values."""
    step = ("import sys, numpy as np, lamina as lm, lamina.nn as nn, lamina.fused as f\n"
            "import lamina.functions as F\n"
            "lm.manual_seed(0)\n"
            "model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))\n"
            "opt = lm.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
            "x = lm.tensor(np.random.default_rng(0).standard_normal((64, 64), np.float32))\n"
            "y = lm.tensor(np.arange(64) % 10)\n"
            "{load}"
            "for _ in range(2):\n"
            "    opt.zero_grad(); loss = F.cross_entropy(model(x), y); loss.backward()\n"
            "    opt.step()\n"
            "print('numba' in sys.modules, f.loaded() is not None, round(loss.item(), 5))\n")
    alone = _python(step.format(load="")).split()
    loaded = _python(step.format(load="f.set_backend('numba')\n")).split()
    assert alone[:2] == ["False", "False"] and loaded[:2] == ["True", "True"]
    assert abs(float(alone[2]) - float(loaded[2])) < 1e-5


@needs_numba
def test_small_convolutions_load_no_numba_and_a_training_batch_does():
    """A small CNN's inference (convolutions, batch norm in eval, 2x2 pooling) runs without
    loading numba at batch 1 and at batch 16; the same network's training step at batch
    16 (without the batch norm, which loads numba in training at any size), whose
    backward kernels gain from numba, loads it (fresh processes)."""
    code = ("import sys, numpy as np, lamina as lm, lamina.nn as nn\n"
            "model = nn.Sequential(nn.Conv2d(1, 16, 3), {norm}nn.ReLU(),\n"
            "                      nn.MaxPool2d(2), nn.Conv2d(16, 64, 3), nn.ReLU(),\n"
            "                      nn.MaxPool2d(2), nn.Flatten(), nn.Linear(1600, 10))\n"
            "x = lm.tensor(np.ones(({n}, 1, 28, 28), np.float32))\n"
            "{run}\n"
            "print('numba' in sys.modules)\n")
    infer = "model.eval()\nwith lm.no_grad():\n    model(x)"
    norm = "nn.BatchNorm2d(16), "
    assert _python(code.format(n=1, norm=norm, run=infer)).strip() == "False"
    assert _python(code.format(n=16, norm=norm, run=infer)).strip() == "False"
    train = "model(x).sum().backward()"
    assert _python(code.format(n=16, norm="", run=train)).strip() == "True"


@needs_numba
def test_a_convolution_keeps_its_forwards_kernels_for_its_backward(monkeypatch):
    """numba loaded by another op between a convolution's forward (which ran NumPy's
    im2col over flattened rows) and its backward: the backward reads the window matrix
    as the forward laid it out, and the gradients are PyTorch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((2, 8, 9, 9)).astype(np.float32)
    w = rng.standard_normal((6, 8, 3, 3)).astype(np.float32)
    gy = rng.standard_normal((2, 6, 7, 7)).astype(np.float32)
    fused.set_backend("numba")
    try:
        monkeypatch.setattr(fused, "compiled_for", lambda *_: None)  # as if not loaded
        xl, wl = lm.tensor(x, requires_grad=True), lm.tensor(w, requires_grad=True)
        yl = F.conv2d(xl, wl)
        monkeypatch.undo()  # loaded now
        yl.backward(lm.tensor(gy))
    finally:
        fused.set_backend(None)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    torch.nn.functional.conv2d(xt, wt).backward(torch.tensor(gy))
    for got, want in ((xl.grad.numpy(), xt.grad.numpy()), (wl.grad.numpy(), wt.grad.numpy())):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


def _conv_run(backend_name, nd, x, w, **kw):
    fused.set_backend(backend_name)
    try:
        xl, wl = lm.tensor(x, requires_grad=True), lm.tensor(w, requires_grad=True)
        y = (F.conv2d if nd == 2 else F.conv1d)(xl, wl, **kw)
        y.backward(lm.tensor(np.cos(np.arange(y.numel(), dtype=np.float32)).reshape(y.shape)))
        return y.detach().numpy(), xl.grad.numpy(), wl.grad.numpy()
    finally:
        fused.set_backend(None)


@needs_numba
@pytest.mark.parametrize("nd,shape,wshape,kw", [
    (2, (3, 8, 9, 7), (6, 8, 3, 3), {"padding": 1}),
    (2, (2, 6, 11, 10), (4, 3, 3, 2), {"stride": 2, "padding": (2, 1), "groups": 2}),
    (2, (2, 64, 6, 5), (8, 64, 3, 3), {"dilation": 2, "padding": 2}),
    (2, (2, 4, 5, 5), (3, 4, 1, 1), {"stride": 3}),
    (1, (2, 5, 17), (7, 5, 4), {"stride": 2, "padding": 3, "dilation": 2}),
])
def test_compiled_im2col_and_col2im_give_the_numpy_convolution(nd, shape, wshape, kw):
    rng = np.random.default_rng(3)
    # A channel-major input, as a convolution's output is: the kernels read any strides.
    x = np.ascontiguousarray(rng.standard_normal(shape).astype(np.float32).swapaxes(0, 1))
    x = x.swapaxes(0, 1)
    w = rng.standard_normal(wshape).astype(np.float32)
    for a, b in zip(_conv_run("numba", nd, x, w, **kw), _conv_run("numpy", nd, x, w, **kw)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _norm_run(backend_name, op, x, gy):
    fused.set_backend(backend_name)
    try:
        xl = lm.tensor(x, requires_grad=True)
        params = []
        if op == "layer_norm":
            layer = lm.nn.LayerNorm(x.shape[-1])
            with lm.no_grad():
                layer.weight.copy_(lm.tensor(np.linspace(0.5, 1.5, x.shape[-1], dtype=np.float32)))
                layer.bias.copy_(lm.tensor(np.linspace(-1, 1, x.shape[-1], dtype=np.float32)))
            y, params = layer(xl), [layer.weight, layer.bias]
        else:
            y = getattr(F, op)(xl, dim=-1)
        y.backward(lm.tensor(gy))
        return [y.detach().numpy(), xl.grad.numpy(), *(p.grad.numpy() for p in params)]
    finally:
        fused.set_backend(None)


def _channel_major(x):
    """x's values in channel-major memory, as a convolution writes its output."""
    return np.ascontiguousarray(x.swapaxes(0, 1)).swapaxes(0, 1)


@needs_numba
@pytest.mark.parametrize("norm", ["layer", "batch"])
def test_a_norm_made_by_the_kernels_takes_its_gradient_without_them(norm):
    """Layer norm's and batch norm's kernels keep x, the mean and 1 / std, not xhat: a
    backward after set_backend("numpy") makes xhat from them and gives the kernels'
    gradients."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((6, 5, 9, 9)) * 3 + 1).astype(np.float32)
    x = _channel_major(x) if norm == "batch" else x
    gy = rng.standard_normal(x.shape).astype(np.float32)
    grads = []
    for switch in (False, True):
        fused.set_backend("numba")
        try:
            layer = lm.nn.LayerNorm(9) if norm == "layer" else lm.nn.BatchNorm2d(5)
            xl = lm.tensor(x, requires_grad=True)
            y = layer(xl)
            if switch:
                fused.set_backend("numpy")
            y.backward(lm.tensor(gy))
        finally:
            fused.set_backend(None)
        grads.append([xl.grad.numpy(), layer.weight.grad.numpy(), layer.bias.grad.numpy()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@needs_numba
@pytest.mark.parametrize("op", ["layer_norm", "softmax", "log_softmax"])
@pytest.mark.parametrize("shape", [(3, 5, 7), (300, 384), (2, 6, 128, 128)])
def test_compiled_layer_norm_and_softmax_agree_with_numpy(op, shape):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal(shape) * 4 + 2).astype(np.float32)
    if op == "softmax" and len(shape) == 4:  # a causal mask's -inf above the diagonal
        x += np.triu(np.full(shape[-2:], -np.inf, np.float32), 1)
    gy = np.asfortranarray(rng.standard_normal(shape).astype(np.float32))  # strided
    for a, b in zip(_norm_run("numba", op, x, gy), _norm_run("numpy", op, x, gy)):
        # Sums over rows in another order: float32 rounding of the array's scale, which
        # a parameter's gradient summed over 300 rows reaches where terms cancel.
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-6 * max(1.0, np.abs(b).max()))


def _attention_run(backend_name, q, k, v, gy, causal):
    fused.set_backend(backend_name)
    try:
        ql, kl, vl = (lm.tensor(a, requires_grad=True) for a in (q, k, v))
        y = F.scaled_dot_product_attention(ql, kl, vl, is_causal=causal)
        y.backward(lm.tensor(gy))
        return [y.detach().numpy(), ql.grad.numpy(), kl.grad.numpy(), vl.grad.numpy()]
    finally:
        fused.set_backend(None)


@needs_numba
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("lengths", [(128, 128), (5, 9), (9, 5), (300, 40)])
def test_compiled_attention_softmax_agrees_with_numpy_and_pytorch(causal, lengths):
    """The scale, causal mask and softmax of attention in one op: the compiled kernels
    (over blocks of rows split across threads, so each block finds its own query index)
    against the NumPy path and PyTorch's function, values and gradients."""
    import torch

    L, S = lengths
    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal((2, 3, n, 16)).astype(np.float32) for n in (L, S, S))
    gy = rng.standard_normal((2, 3, L, 16)).astype(np.float32)
    ours = _attention_run("numba", q, k, v, gy, causal)
    for a, b in zip(ours, _attention_run("numpy", q, k, v, gy, causal)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-6)
    qt, kt, vt = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    yt = torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)
    yt.backward(torch.tensor(gy))
    for a, b in zip(ours, [yt, qt.grad, kt.grad, vt.grad]):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_softmax_of_empty_and_non_finite_rows_is_pytorchs(backend):
    """An empty axis gives an empty result (no max to shift by), a NaN or an all -inf row
    gives NaN, in the compiled kernels as in NumPy's code and PyTorch's."""
    import torch

    for shape in [(3, 0), (0, 4)]:
        x = lm.tensor(np.zeros(shape, np.float32), requires_grad=True)
        y = F.softmax(x, dim=-1)
        y.sum().backward()
        assert y.shape == shape and x.grad.shape == shape
    q = lm.tensor(np.zeros((2, 0, 8), np.float32), requires_grad=True)
    k = lm.tensor(np.ones((2, 5, 8), np.float32), requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, k, is_causal=True)
    out.sum().backward()
    assert out.shape == (2, 0, 8) and np.all(k.grad.numpy() == 0)
    x = np.random.default_rng(7).standard_normal((4, 7)).astype(np.float32)
    x[1, 2], x[2] = np.nan, -np.inf
    np.testing.assert_allclose(F.softmax(lm.tensor(x), dim=-1).numpy(),
                               torch.softmax(torch.tensor(x), -1).numpy(), rtol=1e-6)


def test_log_softmax_and_cross_entropy_of_empty_and_non_finite_rows_are_pytorchs(backend):
    """log_softmax of an empty axis is empty; a row with NaN or +inf, or all -inf, gives
    NaN; and cross-entropy over a (300, 384) batch (threads split its rows) has PyTorch's
    value and gradient, on the compiled kernel as on NumPy's code."""
    import torch

    for shape in [(3, 0), (0, 4)]:
        y = F.log_softmax(lm.tensor(np.zeros(shape, np.float32)), dim=-1)
        assert y.shape == shape
    x = np.random.default_rng(8).standard_normal((5, 9)).astype(np.float32)
    x[1, 2], x[2], x[3, 4] = np.nan, -np.inf, np.inf
    np.testing.assert_allclose(F.log_softmax(lm.tensor(x), dim=-1).numpy(),
                               torch.log_softmax(torch.tensor(x), -1).numpy(), rtol=1e-6)
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((300, 384)) * 5).astype(np.float32)
    labels = rng.integers(0, 384, 300)
    xl, xt = lm.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    loss, loss_t = F.cross_entropy(xl, lm.tensor(labels)), torch.nn.functional.cross_entropy(
        xt, torch.tensor(labels))
    loss.backward()
    loss_t.backward()
    np.testing.assert_allclose(loss.item(), loss_t.item(), rtol=1e-6)
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-8)


def _lstm_run(backend_name, x, layers):
    fused.set_backend(backend_name)
    try:
        lm.manual_seed(5)
        lstm = lm.nn.LSTM(x.shape[-1], 24, num_layers=layers)
        xl = lm.tensor(x, requires_grad=True)
        out, (h, c) = lstm(xl)
        (out.square().sum() + (h * c).sum()).backward()
        return [out.detach().numpy(), h.detach().numpy(), c.detach().numpy(),
                xl.grad.numpy(), *(p.grad.numpy() for p in lstm.parameters())]
    finally:
        fused.set_backend(None)


@needs_numba
@pytest.mark.parametrize("layers", [1, 2])
def test_compiled_lstm_steps_agree_with_numpy(layers):
    x = np.random.default_rng(6).standard_normal((9, 5, 7)).astype(np.float32)
    numba_out, numpy_out = _lstm_run("numba", x, layers), _lstm_run("numpy", x, layers)
    assert len(numba_out) == len(numpy_out) == 4 + 4 * layers
    for a, b in zip(numba_out, numpy_out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _gru_run(backend_name, x, layers, bias):
    fused.set_backend(backend_name)
    try:
        lm.manual_seed(5)
        gru = lm.nn.GRU(x.shape[-1], 24, num_layers=layers, bias=bias)
        xl = lm.tensor(x, requires_grad=True)
        h0 = lm.tensor(np.linspace(-1, 1, layers * x.shape[1] * 24, dtype=np.float32)
                       .reshape(layers, x.shape[1], 24), requires_grad=True)
        out, h = gru(xl, h0)
        (out.square().sum() + (h * h).sum()).backward()
        return [out.detach().numpy(), h.detach().numpy(), xl.grad.numpy(), h0.grad.numpy(),
                *(p.grad.numpy() for p in gru.parameters())]
    finally:
        fused.set_backend(None)


@needs_numba
@pytest.mark.parametrize("layers,bias", [(1, True), (2, True), (2, False)])
def test_compiled_gru_steps_agree_with_numpy(layers, bias):
    """The GRU's compiled kernels (gates read from the transposed GEMM, b_hh or none)
    give the NumPy code's values and gradients, the initial state's included."""
    x = np.random.default_rng(7).standard_normal((9, 5, 7)).astype(np.float32)
    numba_out, numpy_out = _gru_run("numba", x, layers, bias), _gru_run("numpy", x, layers, bias)
    assert len(numba_out) == len(numpy_out) == 4 + (4 if bias else 2) * layers
    for a, b in zip(numba_out, numpy_out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def _bn_run(backend_name, x, gy):
    fused.set_backend(backend_name)
    try:
        bn = lm.nn.BatchNorm2d(x.shape[1])
        with lm.no_grad():
            bn.weight.copy_(lm.tensor(np.linspace(0.5, 2, x.shape[1], dtype=np.float32)))
            bn.bias.copy_(lm.tensor(np.linspace(-1, 1, x.shape[1], dtype=np.float32)))
        xl = lm.tensor(x, requires_grad=True)
        y = bn(xl)
        y.backward(lm.tensor(gy))
        return [y.detach().numpy(), xl.grad.numpy(), bn.weight.grad.numpy(),
                bn.bias.grad.numpy(), bn.running_mean.numpy(), bn.running_var.numpy()]
    finally:
        fused.set_backend(None)


@needs_numba
def test_compiled_batch_norm_agrees_with_numpy_on_channel_major_input():
    rng = np.random.default_rng(8)
    # Channel-major memory, as a convolution writes it: the layout the kernel takes.
    x = np.ascontiguousarray((rng.standard_normal((6, 5, 9, 7)) * 3 + 1).astype(np.float32)
                             .swapaxes(0, 1)).swapaxes(0, 1)
    gy = rng.standard_normal(x.shape).astype(np.float32)
    for a, b in zip(_bn_run("numba", x, gy), _bn_run("numpy", x, gy)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=2e-6)


@needs_numba
@pytest.mark.parametrize("channel_major", [False, True])
def test_compiled_relu_agrees_with_numpy(channel_major):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 8, 16, 16)).astype(np.float32)
    x[0, 0, 0, :3] = [np.nan, 0.0, -0.0]
    if channel_major:
        x = np.ascontiguousarray(x.swapaxes(0, 1)).swapaxes(0, 1)
    gy = rng.standard_normal(x.shape).astype(np.float32)
    out = {}
    for name in fused.BACKENDS:
        fused.set_backend(name)
        xl = lm.tensor(x, requires_grad=True)
        y = F.relu(xl)
        y.backward(lm.tensor(gy))
        out[name] = (y.detach().numpy(), xl.grad.numpy())
    fused.set_backend(None)
    np.testing.assert_array_equal(out["numba"][0], out["numpy"][0])  # NaN where NumPy's
    np.testing.assert_array_equal(out["numba"][1], out["numpy"][1])
    assert out["numba"][0].strides == x.strides  # the input's memory order kept


@needs_numba
def test_relu_backward_from_a_kept_output_agrees_with_numpy():
    """A plan's ReLU keeps y itself where a later op holds it anyway; the compiled backward
    takes y > 0 as its mask, as the NumPy path does."""
    from lamina.functions.activation import ReLU

    rng = np.random.default_rng(10)
    y = np.maximum(rng.standard_normal((64, 100)), 0).astype(np.float32)
    y[0, :3] = [np.nan, 0.0, -0.0]
    gy = rng.standard_normal(y.shape).astype(np.float32)
    out = {}
    for name in fused.BACKENDS:
        fused.set_backend(name)
        op = ReLU()
        op.save_for_backward(y)
        out[name] = op.backward(gy)
    fused.set_backend(None)
    np.testing.assert_array_equal(out["numba"], out["numpy"])
    assert out["numba"][0, 0] == 0 and out["numba"][1, 5] == (gy[1, 5] if y[1, 5] > 0 else 0)


@needs_numba
def test_batch_norm_into_a_plans_buffer_computes_what_eager_does():
    """An execution plan's BatchNorm writes into its buffer (out=); it must take the same
    kernel as eager, or a plan's check against the eager step sees them drift apart."""
    from lamina.functions.normalization import BatchNorm

    rng = np.random.default_rng(10)
    x = np.ascontiguousarray(rng.standard_normal((5, 6, 7, 8)).astype(np.float32)
                             .swapaxes(0, 1)).swapaxes(0, 1)
    g, b = (rng.standard_normal(6).astype(np.float32) for _ in range(2))
    eager = BatchNorm(None, None, True, 0.1, 1e-5)
    eager.needs_input_grad = (True, True, True)
    into = BatchNorm(None, None, True, 0.1, 1e-5)
    into.needs_input_grad = (True, True, True)
    out = np.empty_like(x)
    y = eager.forward(x, g, b)
    assert into.forward(x, g, b, out=out) is out
    np.testing.assert_array_equal(out, y)


@needs_numba
@pytest.mark.parametrize("padding_idx", [None, 3])
def test_compiled_embedding_gradient_agrees_with_numpy(padding_idx):
    rng = np.random.default_rng(11)
    ids = rng.integers(0, 10, (7, 9))  # many repeats
    w = rng.standard_normal((10, 6)).astype(np.float32)
    gy = rng.standard_normal((7, 9, 6)).astype(np.float32)
    grads = []
    for name in fused.BACKENDS:
        fused.set_backend(name)
        wl = lm.tensor(w, requires_grad=True)
        F.embedding(lm.tensor(ids), wl, padding_idx=padding_idx).backward(lm.tensor(gy))
        grads.append(wl.grad.numpy())
    fused.set_backend(None)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-6)
    assert padding_idx is None or not grads[0][padding_idx].any()


@needs_numba
@pytest.mark.parametrize("channel_major", [False, True])
@pytest.mark.parametrize("hw", [(26, 26), (11, 12)])
def test_compiled_max_pool_agrees_with_numpy_and_pytorch(channel_major, hw):
    """2x2 windows at stride 2, over a convolution's channel-major output or NCHW, whole
    windows or a last row left out; NaN and ties included: the first maximum, or the
    last NaN, takes the gradient, as in PyTorch."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(12)
    shape = (40, 20, *hw)  # past 2 * MIN_PIECE elements: split over lamina's threads
    x = np.round(rng.standard_normal(shape), 1).astype(np.float32)  # many ties
    x[0, 0, :2, :2] = [[1.0, np.nan], [np.nan, 2.0]]
    x[1, 2, 2:4, 4:6] = [[np.nan, 0.0], [1.0, 1.0]]
    if channel_major:
        x = np.ascontiguousarray(x.transpose(1, 0, 2, 3)).transpose(1, 0, 2, 3)
    gy = rng.standard_normal((40, 20, hw[0] // 2, hw[1] // 2)).astype(np.float32)
    out = {}
    for name in fused.BACKENDS:
        fused.set_backend(name)
        xl = lm.tensor(x, requires_grad=True)
        y = F.max_pool2d(xl, 2)
        y.backward(lm.tensor(gy))
        out[name] = (y.detach().numpy(), xl.grad.numpy())
    fused.set_backend(None)
    xt = torch.tensor(x, requires_grad=True)
    yt = torch.nn.functional.max_pool2d(xt, 2)
    yt.backward(torch.tensor(gy))
    for y, gx in out.values():
        np.testing.assert_array_equal(y, yt.detach().numpy())
        np.testing.assert_array_equal(gx, xt.grad.numpy())


@needs_numba
def test_max_of_blocks_takes_the_first_maximum_or_the_last_nan():
    """ConvMaxPool's kernel: the maximum over each column's blocks and the block it came
    from, as PyTorch's max pooling chooses (ties at the first, NaN at the last), against
    a NumPy loop, on values drawn from three to tie often."""
    from lamina.fused import numba_pool

    rng = np.random.default_rng(7)
    for o, k, c in [(1, 1, 5), (3, 4, 17), (2, 9, 130), (4, 2, 1), (2, 255, 9)]:
        mem = rng.integers(0, 3, (o, k, c)).astype(np.float32)
        mem[rng.random(mem.shape) < 0.1] = np.nan
        y, idx = np.empty((o, c), np.float32), np.empty((o, c), np.uint8)
        numba_pool.max_of_blocks(mem, y, idx)
        want_y, want_idx = mem[:, 0].copy(), np.zeros((o, c), np.uint8)
        for j in range(1, k):
            take = (mem[:, j] > want_y) | np.isnan(mem[:, j])
            want_y[take], want_idx[take] = mem[:, j][take], j
        np.testing.assert_array_equal(y, want_y)
        np.testing.assert_array_equal(idx, want_idx)


@needs_numba
@pytest.mark.parametrize("backend_name", ["numba", "numpy"])
def test_2x2_max_pooling_chooses_as_pytorch_on_ties_and_nan(backend_name):
    """MaxPool2d(2) on maps drawn from three values (ties in most windows) with NaNs: the
    maxima and, through the gradient, the element each window picked are PyTorch's (the
    first maximum, or the last NaN), compiled kernel and NumPy path alike."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    x = rng.integers(0, 3, (2, 3, 9, 12)).astype(np.float32)
    x[rng.random(x.shape) < 0.08] = np.nan
    gy = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    fused.set_backend(backend_name)
    try:
        xl = lm.tensor(x, requires_grad=True)
        yl = F.max_pool2d(xl, 2)
        yl.backward(lm.tensor(gy))
    finally:
        fused.set_backend(None)
    xt = torch.tensor(x, requires_grad=True)
    yt = torch.nn.functional.max_pool2d(xt, 2)
    yt.backward(torch.tensor(gy))
    np.testing.assert_array_equal(yl.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(xl.grad.numpy(), xt.grad.numpy())


@needs_numba
def test_an_op_run_again_on_other_arrays_keeps_what_that_run_needs():
    """A plan runs one op instance again (tuning a neighbour's variants may hand it a
    strided array): GELU and layer norm keep the kernels' arrays or NumPy's by the last
    run, not the first."""
    from lamina.functions.activation_gelu import GELU
    from lamina.functions.sample_norm import LayerNorm

    rng = np.random.default_rng(12)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    gy = rng.standard_normal((8, 6)).astype(np.float32)
    for make, strided in ((lambda: GELU("none"), x.T), (lambda: LayerNorm((6,), 1e-5),
                                                        x.astype(np.float64).T)):
        again, fresh = make(), make()
        for op in (again, fresh):
            op.needs_input_grad = (True,)
        again.forward(x.T.copy())  # the kernels' path
        y = again.forward(strided)  # NumPy's
        np.testing.assert_array_equal(y, fresh.forward(strided))
        np.testing.assert_array_equal(again.backward(gy), fresh.backward(gy))
