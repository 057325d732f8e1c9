"""lamina.fft against torch.fft: every transform over sizes that crop and pad, odd and even
lengths, each normalisation, real and complex inputs (values, dtypes and gradients); the
c2r gradients against float64 central differences; the frequency helpers; the errors."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

RNG = np.random.default_rng(3)
ONE_DIM = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_DIM = ["fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn", "rfftn",
         "irfftn", "hfftn", "ihfftn"]
REAL_ONLY = ("rfft", "ihfft")


def _data(shape, complex_: bool, dtype=np.float64) -> np.ndarray:
    a = RNG.standard_normal(shape)
    if complex_:
        return (a + 1j * RNG.standard_normal(shape)).astype(np.result_type(dtype, np.complex64))
    return a.astype(dtype)


def _run(lib, f, a):
    x = lib.tensor(a, requires_grad=True)
    y = f(lib, x)
    w = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))
    loss = (y.real * w).sum() + (y.abs() ** 2).sum() * 0.1
    if y.is_complex():
        loss = loss + (y.imag * w * 0.5).sum()
    loss.backward()
    return (y.detach().resolve_conj().numpy(), str(y.dtype).split(".")[-1],
            x.grad.resolve_conj().numpy())


def _same(f, a, tol=1e-9) -> None:
    (ty, tdtype, tgrad), (ly, ldtype, lgrad) = _run(torch, f, a), _run(lamina, f, a)
    assert ldtype == tdtype
    np.testing.assert_allclose(ly, ty, rtol=tol, atol=tol)
    np.testing.assert_allclose(lgrad, tgrad, rtol=tol, atol=tol)


def _inputs(names):
    """(name, complex input?) pairs: real inputs for each, complex ones where taken."""
    return [(name, c) for name in names for c in (False, True)
            if not (c and name.startswith(REAL_ONLY))]


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("n", [None, 5, 8, 12])
@pytest.mark.parametrize("name, complex_", _inputs(ONE_DIM))
def test_a_1d_transform_is_pytorchs(name, complex_, n, norm) -> None:
    _same(lambda lib, x: getattr(lib.fft, name)(x, n=n, dim=1, norm=norm),
          _data((3, 8, 2), complex_))


@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("s", [None, (4, 6), (7, 3), (-1, 9)])
@pytest.mark.parametrize("name, complex_", _inputs(N_DIM))
def test_an_nd_transform_is_pytorchs(name, complex_, s, norm) -> None:
    dim = (0, 2) if name.endswith("n") else (-2, -1)
    _same(lambda lib, x: getattr(lib.fft, name)(x, s=s, dim=dim, norm=norm),
          _data((5, 3, 6), complex_))


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"])
def test_a_transform_over_every_dim_is_pytorchs(name) -> None:
    _same(lambda lib, x: getattr(lib.fft, name)(x), _data((3, 4, 5), not name.startswith(
        REAL_ONLY)))


@pytest.mark.parametrize("name", ["rfft", "irfft", "fft", "ihfft"])
def test_a_float32_transform_keeps_single_precision_as_pytorchs(name) -> None:
    _same(lambda lib, x: getattr(lib.fft, name)(x), _data((3, 8), name in ("irfft", "fft"),
                                                            np.float32), tol=2e-5)


def _central(f, a: np.ndarray, h: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(a)
    for i in range(a.size):
        for unit in ((1.0, 1j) if a.dtype.kind == "c" else (1.0,)):
            step = np.zeros_like(a)
            step.flat[i] = h * unit
            grad.flat[i] += (f(a + step) - f(a - step)) / (2 * h) * unit
    return grad


@pytest.mark.parametrize("name, n, complex_", [
    ("irfft", 7, True), ("irfft", 8, True), ("irfft", 12, True), ("irfft", 4, True),
    ("rfft", 6, False), ("fft", 3, True), ("hfft", 9, True), ("ihfft", 5, False)])
def test_a_transforms_gradient_is_the_central_difference_of_its_loss(name, n, complex_) -> None:
    a = _data((2, 5), complex_)
    w = RNG.standard_normal(64)

    def loss(v, grad=False):
        x = lamina.tensor(v, requires_grad=grad)
        y = getattr(lamina.fft, name)(x, n=n)
        out = (y.real * lamina.tensor(w[:y.numel()].reshape(tuple(y.shape)))).sum()
        if y.is_complex():
            out = out + (y.imag * lamina.tensor(w[-y.numel():].reshape(tuple(y.shape)))).sum()
        if grad:
            out.backward()
            return x.grad.numpy()
        return out.item()

    np.testing.assert_allclose(loss(a, grad=True), _central(loss, a), rtol=1e-6, atol=1e-7)


def test_the_frequency_helpers_are_pytorchs() -> None:
    for n, d in ((5, 0.1), (6, 1.0), (1, 2.0)):
        assert np.allclose(lamina.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
        assert np.allclose(lamina.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy())
    assert lamina.fft.fftfreq(4, dtype=lamina.float64).dtype == lamina.float64
    a = np.arange(30).reshape(5, 6)
    for dim in (None, 0, (1,), (0, 1), -1):
        for shift in ("fftshift", "ifftshift"):
            theirs = getattr(torch.fft, shift)(torch.tensor(a), dim=dim).numpy()
            assert np.array_equal(getattr(lamina.fft, shift)(lamina.tensor(a), dim=dim).numpy(),
                                  theirs)


def test_an_integer_input_is_taken_as_the_default_float_as_pytorchs() -> None:
    y = lamina.fft.fft(lamina.tensor([1, 2, 3]))
    assert y.dtype == lamina.complex64
    np.testing.assert_allclose(y.numpy(), torch.fft.fft(torch.tensor([1, 2, 3])).numpy())


def test_a_misused_transform_says_what_it_expects() -> None:
    with pytest.raises(RuntimeError, match="rfft: expects a real input"):
        lamina.fft.rfft(lamina.tensor([1j, 2.0]))
    with pytest.raises(ValueError, match="Invalid normalization mode"):
        lamina.fft.fft(lamina.ones(4), norm="unit")
    with pytest.raises(TypeError, match="float16"):
        lamina.fft.fft(lamina.ones(4, dtype=lamina.float16))
    with pytest.raises(RuntimeError, match="invalid number of data points"):
        lamina.fft.irfft(lamina.ones(1, dtype=lamina.cfloat))
    with pytest.raises(IndexError, match="out of range"):
        lamina.fft.fft(lamina.ones(4), dim=1)
    with pytest.raises(RuntimeError, match="same length"):
        lamina.fft.fftn(lamina.ones(4, 4), s=(2, 2), dim=(0,))


def test_a_spectral_layer_trains_as_pytorchs() -> None:
    """A Fourier neural operator's spectral convolution (rfft, a complex weight on the low
    modes by einsum, irfft) trained by Adam: losses and weights as PyTorch's."""
    weight = (RNG.standard_normal((3, 3, 4)) + 1j * RNG.standard_normal((3, 3, 4))) / 3
    x, target = RNG.standard_normal((2, 3, 16)), RNG.standard_normal((2, 3, 16))
    results = []
    for lib in (torch, lamina):
        w = lib.nn.Parameter(lib.tensor(weight))
        opt = lib.optim.Adam([w], lr=0.05)
        xs, ts, losses = lib.tensor(x), lib.tensor(target), []
        for _ in range(5):
            opt.zero_grad()
            spectrum = lib.fft.rfft(xs)[:, :, :4]
            y = lib.fft.irfft(lib.einsum("bix,iox->box", spectrum, w), n=16)
            loss = ((y - ts) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        results.append((losses, w.detach().numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-10)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-9, atol=1e-12)


class _Spectral(lamina.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = lamina.nn.Parameter(lamina.ones(4, dtype=lamina.cfloat))

    def forward(self, x):
        return lamina.fft.irfft(lamina.fft.rfft(x)[..., :4] * self.weight, n=x.shape[-1])


def test_a_plan_refuses_complex_tensors_and_compile_runs_them_eagerly() -> None:
    """A plan's kernels and buffers are for real numbers: tracing a complex op says so,
    and lamina.compile falls back to eager mode (with its one-line warning)."""
    model, x = _Spectral(), lamina.randn(2, 8)
    with pytest.raises(lamina.plan.TraceError, match="complex tensors"):
        lamina.plan.compile(model, lambda out, y: ((out - y) ** 2).mean(), (x, x))
    compiled = lamina.compile(model)
    with lamina.no_grad(), pytest.warns(UserWarning, match="runs eagerly"):
        out = compiled(x)
    np.testing.assert_allclose(out.numpy(), model(x).detach().numpy())
