"""Complex tensors against PyTorch: dtypes and promotion, printing, the ops that take them
(values and PyTorch's gradient, dL/dRe + i dL/dIm, checked against float64 central
differences too), the refusals of the ops that do not, and optimizers on complex
parameters."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

RNG = np.random.default_rng(7)


def _complex(shape) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


def _loss(lib, y):
    """A real loss that reads both parts of y (and its modulus)."""
    w = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
    if not y.is_complex():
        return (y * w).sum()
    return (y.real * w).sum() + (y.imag * w * 0.5).sum() + (y.abs() ** 2).sum() * 0.1


def _numpy(t):
    return t.detach().resolve_conj().numpy()


OPS = {
    "add": lambda m, a, b: a + b.T, "sub": lambda m, a, b: a - 2 * b.T,
    "mul": lambda m, a, b: a * b.T, "div": lambda m, a, b: a / b.T,
    "matmul": lambda m, a, b: a @ b, "einsum": lambda m, a, b: m.einsum("ij,jk->ik", a, b),
    "scalar": lambda m, a, b: (a * 1j + 2) / (1 - 0.5j) + b.T,
    "real_operand": lambda m, a, b: a * a.abs() + b.T.real,
    "pow": lambda m, a, b: a ** 2 + b.T ** 3, "neg": lambda m, a, b: -a * b.T,
    "exp": lambda m, a, b: m.exp(a) + b.T, "log": lambda m, a, b: m.log(a) * b.T,
    "sqrt": lambda m, a, b: m.sqrt(a) * b.T, "sin": lambda m, a, b: m.sin(a) * m.cos(b.T),
    "tanh": lambda m, a, b: m.tanh(a) + m.sigmoid(b.T), "sinh": lambda m, a, b: m.sinh(a) + m.cosh(b.T),
    "reciprocal": lambda m, a, b: m.reciprocal(a) + m.rsqrt(b.T),
    "log1p": lambda m, a, b: m.log1p(a) + m.expm1(b.T), "square": lambda m, a, b: m.square(a) + b.T,
    "sum": lambda m, a, b: a.sum(0) * b.sum(1), "mean": lambda m, a, b: a.mean(1) * b.mean(0),
    "cumsum": lambda m, a, b: a.cumsum(1) * b.T,
    "abs": lambda m, a, b: a.abs() + b.T.abs(), "angle": lambda m, a, b: a.angle() * b.T.abs(),
    "real_imag": lambda m, a, b: a.real * b.T.imag, "conj": lambda m, a, b: a.conj() * b.T,
    "mH": lambda m, a, b: a.mH @ b.H, "reshape": lambda m, a, b: a.reshape(12) * b.reshape(12),
    "index": lambda m, a, b: a[1:, ::2] * b.T[:2, 1:3],
    "cat": lambda m, a, b: m.cat([a, b.T]) * 2, "stack": lambda m, a, b: m.stack([a, b.T], 1),
    "where": lambda m, a, b: m.where(a.abs() > 1, a, b.T), "roll": lambda m, a, b: a.roll(1, 0) * b.T,
    "view_as_real": lambda m, a, b: m.view_as_real(a * b.T) ** 2,
    "view_as_complex": lambda m, a, b: m.view_as_complex(m.view_as_real(a).exp()) * b.T,
    "complex": lambda m, a, b: m.complex(a.real, b.T.imag) ** 2,
    "polar": lambda m, a, b: m.polar(a.abs(), b.T.angle()) ** 2,
    "setitem": lambda m, a, b: _written(m, a, b),
    "gather": lambda m, a, b: a.gather(1, m.tensor([[0, 3], [1, 1], [2, 0]])) * b.T[:, :2],
    "index_select": lambda m, a, b: a.index_select(1, m.tensor([3, 0])) * b.T[:, 1:3],
    "index_add": lambda m, a, b: a.index_add(1, m.tensor([0, 2]), b.T[:, :2]),
    "scatter": lambda m, a, b: a.scatter(1, m.tensor([[0, 3], [1, 2], [2, 0]]), b.T[:, :2]),
    "pad": lambda m, a, b: m.nn.functional.pad(a, (1, 2)) * 2,
    "tril_diag": lambda m, a, b: a[:, :3].tril() + m.diag_embed(b.diagonal()),
}


def _written(m, a, b):
    """A complex buffer written into by index (a Fourier layer's modes)."""
    z = m.zeros(3, 4, dtype=m.complex128)
    z[:, 1:3] = b.T[:, :2]
    return z * a


@pytest.mark.parametrize("name", OPS)
def test_an_op_on_complex_tensors_gives_pytorchs_values_and_gradients(name) -> None:
    a, b = _complex((3, 4)), _complex((4, 3))
    results = []
    for lib in (torch, lamina):
        ta, tb = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        y = OPS[name](lib, ta, tb)
        _loss(lib, y).backward()
        results.append((_numpy(y), str(y.dtype).split(".")[-1],
                        [None if t.grad is None else _numpy(t.grad) for t in (ta, tb)]))
    (theirs, their_dtype, their_grads), (ours, our_dtype, our_grads) = results
    assert our_dtype == their_dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for g_ours, g_theirs in zip(our_grads, their_grads):
        assert (g_ours is None) == (g_theirs is None)
        if g_ours is not None:
            np.testing.assert_allclose(g_ours, g_theirs, rtol=1e-10, atol=1e-12)


def _central(f, a: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """dL/dRe + i dL/dIm of the real loss f at a, by central differences."""
    grad = np.zeros_like(a)
    for i in range(a.size):
        for unit in (1.0, 1j):
            step = np.zeros_like(a)
            step.flat[i] = h * unit
            slope = (f(a + step) - f(a - step)) / (2 * h)
            grad.flat[i] += slope * unit
    return grad


@pytest.mark.parametrize("name", ["mul", "div", "matmul", "exp", "sqrt", "abs", "angle",
                                  "conj", "tanh", "polar"])
def test_a_complex_gradient_is_the_central_difference_of_its_loss(name) -> None:
    b = lamina.tensor(_complex((4, 3)))

    def loss(a):
        return _loss(lamina, OPS[name](lamina, lamina.tensor(a), b)).item()

    a = _complex((3, 4))
    x = lamina.tensor(a, requires_grad=True)
    _loss(lamina, OPS[name](lamina, x, b)).backward()
    np.testing.assert_allclose(x.grad.numpy(), _central(loss, a), rtol=1e-6, atol=1e-6)


def test_complex_dtypes_and_promotion_are_pytorchs() -> None:
    assert lamina.tensor(1j).dtype == lamina.complex64 == lamina.cfloat
    assert lamina.tensor([1, 2j]).dtype == lamina.complex64
    assert lamina.complex128 == lamina.cdouble and isinstance(lamina.cfloat, lamina.dtype)
    kinds = {"f32": (np.float32,), "f64": (np.float64,), "i64": (np.int64,),
             "c64": (np.complex64,), "c128": (np.complex128,)}
    for left in kinds:
        for right in kinds:
            for right_dims in (1, 0):
                t = [torch.ones(2, dtype=getattr(torch, np.dtype(kinds[left][0]).name)),
                     torch.ones((2,) * right_dims, dtype=getattr(torch, np.dtype(kinds[right][0]).name))]
                ours = [lamina.ones(2, dtype=kinds[left][0]),
                        lamina.ones((2,) * right_dims, dtype=kinds[right][0])]
                assert str((ours[0] + ours[1]).dtype) == str((t[0] + t[1]).dtype).split(".")[1]
    for scalar in (1j, 2.0, 3):
        for d in ("float32", "float64", "int64", "complex64", "complex128"):
            theirs = torch.ones(2, dtype=getattr(torch, d)) * scalar
            assert str((lamina.ones(2, dtype=d) * scalar).dtype) == str(theirs.dtype).split(".")[1]
    assert lamina.promote_types(lamina.float64, lamina.complex64) == lamina.complex128
    assert lamina.promote_types(lamina.int64, lamina.complex64) == lamina.complex64


def test_a_complex_tensor_prints_as_pytorchs() -> None:
    for values in ([1 + 10j, 1 + 2j, -3.5 - 100j], [[1e-5 + 1j, 2 + 3j], [1, 2]], 1 + 2j,
                   [float("nan") + 1j, float("inf") * 1j], [0.1234 - 0.5j]):
        theirs = repr(torch.tensor(values)).replace("torch", "lamina")
        assert repr(lamina.tensor(values)) == theirs
    assert repr(lamina.zeros(0, dtype=lamina.cfloat)) == "tensor([], dtype=lamina.complex64)"
    assert repr(lamina.tensor([1j], dtype=lamina.cdouble)) == \
        "tensor([0.+1.j], dtype=lamina.complex128)"


def test_view_as_real_and_real_share_the_complex_tensors_memory() -> None:
    z = lamina.tensor([1 + 2j, 3 - 4j])
    lamina.view_as_real(z)[0, 1] = 7.0
    assert z[0].item() == 1 + 7j
    assert np.shares_memory(z.real.numpy(), z.numpy())
    assert lamina.view_as_complex(lamina.view_as_real(z)).tolist() == [1 + 7j, 3 - 4j]
    with pytest.raises(RuntimeError, match="contiguous"):
        lamina.view_as_complex(lamina.ones(2, 4)[:, ::2])
    with pytest.raises(RuntimeError, match="non-complex"):
        _ = lamina.ones(2).imag


def test_a_complex_random_draw_splits_its_variance_as_pytorchs() -> None:
    z = lamina.randn(200_000, dtype=lamina.cfloat)
    assert z.dtype == lamina.complex64
    assert abs(z.real.var().item() - 0.5) < 0.01 and abs(z.imag.var().item() - 0.5) < 0.01
    u = lamina.rand(100_000, dtype=lamina.cdouble)
    assert u.real.min().item() >= 0 and u.imag.max().item() < 1
    assert abs(u.imag.mean().item() - 0.5) < 0.01


def test_an_op_without_a_complex_rule_refuses_complex_operands_naming_itself() -> None:
    z = lamina.tensor([1 + 1j], requires_grad=True)
    with pytest.raises(NotImplementedError, match=r"ReLU: lamina does not support complex"):
        lamina.relu(z)
    with pytest.raises(RuntimeError, match="Extremum"):
        z.max()
    with pytest.raises(NotImplementedError, match="create_graph=True through an op on complex"):
        lamina.autograd.grad((z * z).abs().sum(), z, create_graph=True)


@pytest.mark.parametrize("name, kwargs", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("Adam", {"lr": 0.1, "amsgrad": True}), ("AdamW", {"lr": 0.1, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5}), ("Adagrad", {"lr": 0.1})])
def test_an_optimizer_steps_a_complex_parameter_as_pytorchs(name, kwargs) -> None:
    start, target = _complex((3, 2)), _complex((3, 2))
    results = []
    for lib in (torch, lamina):
        p = lib.nn.Parameter(lib.tensor(start))
        opt = getattr(lib.optim, name)([p], **kwargs)
        for _ in range(4):
            opt.zero_grad()
            ((p - lib.tensor(target)).abs() ** 2).sum().backward()
            opt.step()
        results.append(p.detach().numpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)


def test_clip_grad_norm_of_complex_gradients_is_real_as_pytorchs() -> None:
    g = _complex((4,))
    norms, clipped = [], []
    for lib in (torch, lamina):
        p = lib.nn.Parameter(lib.zeros(4, dtype=lib.complex128))
        p.grad = lib.tensor(g)
        norms.append(lib.nn.utils.clip_grad_norm_([p], 0.5))
        clipped.append(p.grad.numpy())
    assert norms[1].dtype == lamina.float64 and not norms[1].is_complex()
    np.testing.assert_allclose(norms[1].item(), norms[0].item(), rtol=1e-12)
    np.testing.assert_allclose(clipped[1], clipped[0], rtol=1e-12)


def test_a_custom_function_on_complex_tensors_gets_pytorchs_gradients() -> None:
    """A user's Function computes the complex gradient itself, as PyTorch expects of it."""
    def make(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, z):
                ctx.save_for_backward(z)
                return z * z

            @staticmethod
            def backward(ctx, g):
                (z,) = ctx.saved_tensors
                return g * (2 * z).conj()  # PyTorch's rule: g times conj(f'(z))

        return Square

    a = _complex((3,))
    grads = []
    for lib in (torch, lamina):
        z = lib.tensor(a, requires_grad=True)
        _loss(lib, make(lib).apply(z)).backward()
        grads.append(_numpy(z.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_complex_state_written_as_tensors_steps_as_pytorchs() -> None:
    """A complex parameter whose optimizer state the user's code filled with tensors (as
    A3C's SharedAdam does): the step count and moments go back into those tensors."""
    start = _complex((2,)).astype(np.complex64)
    results = []
    for lib in (torch, lamina):
        p = lib.nn.Parameter(lib.tensor(start))
        opt = lib.optim.Adam([p], lr=0.1)
        opt.state[p]["step"] = lib.tensor(0.0)
        opt.state[p]["exp_avg"] = lib.zeros(2, dtype=lib.cfloat)
        opt.state[p]["exp_avg_sq"] = lib.zeros(2, dtype=lib.cfloat)
        for _ in range(3):
            opt.zero_grad()
            (p.abs() ** 2).sum().backward()
            opt.step()
        results.append((p.detach().numpy(), opt.state[p]["step"].item(),
                        opt.state[p]["exp_avg"].numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    assert results[1][1] == results[0][1] == 3
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-6)
