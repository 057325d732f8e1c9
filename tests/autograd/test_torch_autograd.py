"""Autograd behaviour checked against PyTorch: in-place ops and version counters, the
no_grad manual update, hooks, retain_grad, autograd.grad, backward(inputs=), grad modes,
and custom ops written PyTorch's way."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

# Each scenario is a function of the library; it returns the tensors whose gradients to
# compare, or raises where the library refuses.
SCENARIOS = {
    "exp output changed in place": lambda t, a: (a.exp().add_(1), a),
    "sigmoid output changed in place": lambda t, a: (a.sigmoid().mul_(2), a),
    "mul input changed after use": lambda t, a: _mul_then_change(t, a),
    "add input changed after use": lambda t, a: _add_then_change(t, a),
    "in-place on a non-leaf, then used": lambda t, a: ((a * 2).add_(1) * a, a),
    "setitem on a non-leaf": lambda t, a: (_setitem(a), a),
    "in-place through a view": lambda t, a: (_through_view(a), a),
    "leaf in place under grad mode": lambda t, a: (a.add_(1), a),
    "pow output changed": lambda t, a: (a.pow(3).sub_(1), a),
    "relu of a clone in place": lambda t, a: (a.clone().relu_() * a, a),
}


def _mul_then_change(t, a):
    b = a * 1.0
    c = b * b
    b.add_(1)
    return c, a


def _add_then_change(t, a):
    b = a * 1.0
    c = b + 3
    b.mul_(5)
    return c, a


def _setitem(a):
    b = a * 3
    b[0] = 7.0
    b[1:, 0] = a[1:, 1]
    return b


def _through_view(a):
    b = a * 1.0
    c = b.exp()
    b[0].zero_()
    return c


def _run(lib, name):
    a = lib.tensor(np.arange(6.0).reshape(3, 2) / 5 - 0.3, requires_grad=True)
    out, leaf = SCENARIOS[name](lib, a)
    out.sum().backward()
    return leaf.grad


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_in_place_autograd_fails_or_agrees_where_pytorch_does(name: str) -> None:
    try:
        want = _run(torch, name)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours:
            _run(lamina, name)
        # both name the same kind of failure
        kind = "leaf" if "leaf" in str(e) else "modified by an inplace operation"
        assert kind in str(ours.value)
        return
    got = _run(lamina, name)
    np.testing.assert_allclose(got.array, want.numpy(), rtol=1e-6)


def test_version_counters_count_writes_and_views_share_them() -> None:
    for lib in (torch, lamina):
        x = lib.zeros(3)
        v = x[1:]
        x.add_(1)
        v.mul_(2)
        assert x._version == v._version == 2
        assert x.data._version == 0 or lib is torch  # .data shares memory, not the counter
        np.testing.assert_array_equal(np.asarray(x.tolist()), [1, 2, 2])


def _walk(fn, seen=0):
    """The graph below grad_fn as PyTorch's tutorial walks it: per next function, "op"
    (and its own), "leaf" with whether `variable` is one of the leaves, or None."""
    out = []
    for nxt, index in fn.next_functions:
        if nxt is None:
            out.append((None, index))
        elif hasattr(nxt, "variable"):
            out.append(("leaf", index, nxt.variable.shape))
        else:
            out.append(("op", index, _walk(nxt)))
    return out


def test_next_functions_walk_the_graph_as_pytorchs() -> None:
    graphs = []
    for lib in (torch, lamina):
        w = lib.tensor(np.ones((3, 2)), requires_grad=True)
        b = lib.tensor(np.zeros(2), requires_grad=True)
        x = lib.tensor(np.ones((4, 3)))
        loss = ((x @ w + b) * 2).sum()
        graphs.append(_walk(loss.grad_fn))
        leaves = {id(f.variable) for f, _ in loss.grad_fn.next_functions[0][0]
                  .next_functions[0][0].next_functions if f is not None and
                  hasattr(f, "variable")}
        assert leaves == {id(b)}
    assert graphs[0] == graphs[1]


def _sgd_run(lib, manual: bool) -> list[float]:
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    xs = lib.tensor(rng.standard_normal((32, 3)), dtype=lib.float32)
    ys = lib.tensor(rng.standard_normal((32, 1)), dtype=lib.float32)
    w = lib.tensor(rng.standard_normal((3, 1)) * 0.1, dtype=lib.float32, requires_grad=True)
    b = lib.zeros(1, requires_grad=True)
    opt = None if manual else lib.optim.SGD([w, b], lr=0.1)
    losses = []
    for _ in range(20):
        loss = ((xs @ w + b - ys) ** 2).mean()
        losses.append(loss.item())
        if manual:
            loss.backward()
            with lib.no_grad():
                w -= 0.1 * w.grad
                b -= 0.1 * b.grad
                w.grad.zero_()
                b.grad.zero_()
        else:
            opt.zero_grad()
            loss.backward()
            opt.step()
    return losses


def test_the_no_grad_manual_update_trains_as_an_optimizer_does() -> None:
    manual, stepped = _sgd_run(lamina, True), _sgd_run(lamina, False)
    np.testing.assert_allclose(manual, stepped, rtol=1e-6)
    assert manual[-1] < 0.9 * manual[0]
    np.testing.assert_allclose(manual, _sgd_run(torch, True), rtol=1e-5)


def _hooks(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    seen = []
    h = x.register_hook(lambda g: g * 2)
    y = x * x
    y.retain_grad()
    y.register_hook(lambda g: seen.append(g.tolist()))
    z = (y * lib.tensor([1.0, -1.0, 0.5])).sum()
    z.backward()
    h.remove()
    return x.grad.tolist(), y.grad.tolist(), seen, y.is_leaf, z.grad_fn is not None


def test_hooks_and_retain_grad_match_pytorch() -> None:
    assert _hooks(lamina) == _hooks(torch)


def _retained_then_changed(lib, make):
    """A retained gradient that is the very gradient another tensor takes (a sum's, a
    copy's), then that tensor's .grad changed in place, as an optimizer or clipping does."""
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = make(x)
    y.retain_grad()
    (y * 2).sum().backward()
    with lib.no_grad():
        x.grad.mul_(10)
    return x.grad.tolist(), y.grad.tolist()


@pytest.mark.parametrize("make", [lambda x: x + 0, lambda x: x.clone(),
                                  lambda x: x.contiguous() * 1])
def test_a_retained_gradient_is_the_tensors_own(make) -> None:
    assert _retained_then_changed(lamina, make) == _retained_then_changed(torch, make)


def _grads(lib):
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = lib.tensor([0.5, 0.5, 2.0], requires_grad=True)
    h = x * w
    out = (h.tanh() * h).sum()
    gx, gh = lib.autograd.grad(out, (x, h), retain_graph=True)
    unused = lib.tensor([1.0], requires_grad=True)
    (none,) = lib.autograd.grad(out, unused, allow_unused=True, retain_graph=True)
    out.backward(inputs=[w])
    return gx.tolist(), gh.tolist(), none, x.grad, w.grad.tolist()


def test_autograd_grad_and_backward_inputs_match_pytorch() -> None:
    ours, theirs = _grads(lamina), _grads(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    assert ours[2] is None and theirs[2] is None and ours[3] is None and theirs[3] is None
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-6)
    with pytest.raises(RuntimeError, match="not have been used"):
        lamina.autograd.grad((lamina.ones(1, requires_grad=True) * 2).sum(),
                             lamina.ones(1, requires_grad=True))


def test_autograd_grad_of_several_outputs_sums_them_at_a_non_leaf() -> None:
    """Each output's gradient reaches the non-leaf input: their sum, as PyTorch's (the
    last output's alone before the fix)."""
    got = []
    for lib in (torch, lamina):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        (g,) = lib.autograd.grad([y.sum(), (y * y).sum(), (y ** 3).mean()], y)
        got.append(g.detach().numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-6)


def test_grad_modes_as_context_managers_and_decorators() -> None:
    for lib in (torch, lamina):
        x = lib.ones(2, requires_grad=True)

        @lib.no_grad()
        def f(t):
            return t * 2

        @lib.no_grad
        def g(t):
            return t * 2

        @lib.inference_mode()
        def h(t):
            return t * 2

        assert not f(x).requires_grad and not g(x).requires_grad and not h(x).requires_grad
        with lib.set_grad_enabled(False):
            assert not (x * 2).requires_grad
            with lib.enable_grad():
                assert (x * 2).requires_grad
        assert (x * 2).requires_grad
        lib.set_grad_enabled(False)
        assert not lib.is_grad_enabled()
        lib.set_grad_enabled(True)
        assert lib.is_grad_enabled()


def _custom(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x ** 3 * scale

        @staticmethod
        def backward(ctx, gy):
            (x,) = ctx.saved_tensors
            return gy * 3 * x ** 2 * ctx.scale, None

    x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = Cube.apply(x, 2.0)
    (y * y).sum().backward()
    return y.tolist(), x.grad.tolist()


def test_custom_ops_written_pytorchs_way_match() -> None:
    ours, theirs = _custom(lamina), _custom(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


def test_data_and_grad_are_tensors() -> None:
    for lib in (torch, lamina):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        assert p.grad is None
        (p * p).sum().backward()
        assert isinstance(p.grad, lib.Tensor) and isinstance(p.data, lib.Tensor)
        assert abs(p.grad.norm().item() - 20 ** 0.5) < 1e-6
        p.data.add_(p.grad, alpha=-0.5)
        assert p.tolist() == [0.0, 0.0] and p.is_leaf and p.requires_grad
    assert isinstance(lamina.tensor([1.0]).array, np.ndarray)


def test_a_gpu_is_refused_with_the_reason() -> None:
    assert lamina.cuda.is_available() is False and lamina.cuda.device_count() == 0
    assert lamina.accelerator.is_available() is False
    with pytest.raises(RuntimeError, match="lamina computes with NumPy on the CPU"):
        lamina.zeros(2, device="cuda")
    with pytest.raises(RuntimeError, match="on the CPU"):
        lamina.ones(2).to("cuda:0")
    assert lamina.ones(2).to("cpu").device == lamina.device("cpu") == "cpu"


def test_random_draws_repeat_under_manual_seed_and_generators() -> None:
    draws = []
    for _ in range(2):
        lamina.manual_seed(3)
        draws.append([lamina.rand(3).tolist(), lamina.randn(2).tolist(),
                      lamina.randint(0, 9, (4,)).tolist(), lamina.randperm(5).tolist(),
                      lamina.normal(lamina.zeros(2), 1.0).tolist(),
                      lamina.empty(3).normal_().tolist()])
    assert draws[0] == draws[1]
    g1, g2 = lamina.Generator().manual_seed(5), lamina.Generator().manual_seed(5)
    assert lamina.rand(4, generator=g1).tolist() == lamina.rand(4, generator=g2).tolist()
    lamina.manual_seed(3)
    u = lamina.rand(20000)
    assert u.min().item() >= 0 and u.max().item() < 1 and abs(u.mean().item() - 0.5) < 0.01
    n = lamina.randn(20000)
    assert abs(n.mean().item()) < 0.03 and abs(n.std().item() - 1) < 0.03


def test_default_dtype_is_float32_and_can_change() -> None:
    for lib in (torch, lamina):
        assert lib.tensor([1.0]).dtype == lib.float32
        lib.set_default_dtype(lib.float64)
        try:
            assert lib.tensor([1.0]).dtype == lib.float64
            assert lib.zeros(2).dtype == lib.float64
            assert (lib.tensor([1, 2]) / 2).dtype == lib.float64
        finally:
            lib.set_default_dtype(lib.float32)


def test_bad_tensor_data_is_refused() -> None:
    for bad in (np.array(["a", "b"]), np.array([1 + 2j], np.clongdouble), np.array([object()])):
        with pytest.raises(TypeError, match="not supported"):
            lamina.tensor(bad)


def test_a_custom_function_in_the_setup_context_form_gives_pytorchs_gradient():
    def make(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(x, k):
                return x ** 3 * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k = inputs
                ctx.save_for_backward(x)
                ctx.k = k

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x * x * g * ctx.k, None
        return Cube

    grads = []
    for lib in (torch, lamina):
        x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
        out = make(lib).apply(x, 2.0)
        (out * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        grads.append((out.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0])
    np.testing.assert_allclose(grads[1][1], grads[0][1])
