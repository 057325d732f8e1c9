"""Tensors whose memory order lamina chose (a convolution's channel-major output and what
the ops after it make of it) against PyTorch's contiguous ones: `view` flattens them as
PyTorch's does, in eager mode, without gradients and from a plan, to the same values and
gradients; a transpose the user asked for is still strided as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")


def _features(lib, x, w, b):
    """The CIFAR-10 tutorial's first stage: convolution, ReLU, 2x2 max pooling."""
    return lib.nn.functional.max_pool2d(lib.nn.functional.relu(
        lib.nn.functional.conv2d(x, w, b)), 2)


def _arrays():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((3, 2, 10, 10)).astype(np.float32),
            rng.standard_normal((4, 2, 3, 3)).astype(np.float32),
            rng.standard_normal(4).astype(np.float32))


@pytest.mark.parametrize("shape", [(3, -1), (-1, 4 * 4 * 4), (3, 4, 16), (-1,)])
def test_view_of_a_convolutions_output_flattens_it_as_pytorchs(shape) -> None:
    results = []
    for lib in (torch, lamina):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in _arrays())
        y = _features(lib, x, w, b)
        flat = y.view(*shape)
        (flat * flat).sum().backward()
        results.append([np.asarray(t.detach().numpy() if lib is torch else t.array)
                        for t in (flat, x.grad, w.grad, b.grad)])
    assert not _features(lamina, *(lamina.tensor(a) for a in _arrays())).is_contiguous()
    for got, want in zip(results[1], results[0]):  # float32 rounding of the array's scale
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * np.abs(want).max())


def test_view_without_gradients_and_from_a_plan() -> None:
    x, w, b = _arrays()
    want = _features(torch, *(torch.tensor(a) for a in (x, w, b))).view(3, -1).numpy()
    with lamina.no_grad():
        y = _features(lamina, *(lamina.tensor(a) for a in (x, w, b)))
        np.testing.assert_allclose(y.view(3, -1).array, want, rtol=1e-5, atol=1e-5)
    model = lamina.nn.Sequential(lamina.nn.Conv2d(2, 4, 3), lamina.nn.ReLU(),
                                 lamina.nn.MaxPool2d(2))
    model.load_state_dict({"0.weight": w, "0.bias": b})
    plan = lamina.plan.compile(model, example_batch=(lamina.tensor(x),))
    np.testing.assert_allclose(plan(lamina.tensor(x)).view(3, -1).array, want,
                               rtol=1e-5, atol=1e-5)


def test_detach_and_data_keep_what_view_needs() -> None:
    """A convolution's features taken out of the graph flatten as PyTorch's do."""
    x, w, b = _arrays()
    want = _features(torch, *(torch.tensor(a) for a in (x, w, b))).view(3, -1).numpy()
    y = _features(lamina, *(lamina.tensor(a, requires_grad=True) for a in (x, w, b)))
    for t in (y.detach(), y.data, y.detach().requires_grad_()):
        np.testing.assert_allclose(t.view(3, -1).array, want, rtol=1e-5, atol=1e-5)


def test_a_transposed_tensor_is_still_strided_as_pytorchs() -> None:
    for lib in (torch, lamina):
        m = lib.tensor(np.arange(12.0).reshape(3, 4))
        with pytest.raises(RuntimeError, match="view size is not compatible|not compatible"):
            m.t().view(12)
        with pytest.raises(RuntimeError, match="view size is not compatible|not compatible"):
            lib.tensor(np.arange(24.0).reshape(2, 3, 4)).permute(2, 0, 1)[1:].view(-1)
        assert m.t().reshape(12).tolist() == [0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]


def test_view_shares_memory_where_it_can() -> None:
    m = lamina.zeros(2, 6)
    v = m.view(3, 4)
    v[0, 0] = 5.0
    assert m[0, 0].item() == 5.0 and m._version == v._version == 1
