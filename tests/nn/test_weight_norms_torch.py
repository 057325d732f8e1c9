"""nn.utils.weight_norm and spectral_norm against PyTorch's: the same names in the state
dict, the same outputs and gradients from the same weights, the same power iteration
(from the same vectors) in training and none in evaluation, and remove_* undoing them."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

LAYERS = [("Linear(4, 3)", (5, 4)), ("Conv2d(2, 3, 3)", (2, 2, 5, 5)),
          ("ConvTranspose2d(2, 3, 2)", (1, 2, 3, 3))]


def _pair(source):
    theirs = eval(source, {}, vars(torch.nn)).double()  # noqa: S307 - our own lines
    ours = eval(source, {}, vars(lm.nn)).to(lm.float64)  # noqa: S307
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def _step(ours, theirs, shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape)
    a, b = ours(lm.tensor(x)), theirs(torch.tensor(x))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = np.random.default_rng(seed + 1).standard_normal(tuple(b.shape))
    (a * lm.tensor(w)).sum().backward()
    (b * torch.tensor(w)).sum().backward()
    grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[name].grad.numpy(), rtol=1e-9,
                                   atol=1e-12, err_msg=name)


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated")
@pytest.mark.parametrize("source, shape", LAYERS, ids=[s for s, _ in LAYERS])
@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_pytorch(source, shape, dim):
    ours, theirs = _pair(source)
    lm.nn.utils.weight_norm(ours, dim=dim)
    torch.nn.utils.weight_norm(theirs, dim=dim)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-12)
    _step(ours, theirs, shape)
    lm.nn.utils.remove_weight_norm(ours)
    torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("source, shape", LAYERS, ids=[s for s, _ in LAYERS])
def test_spectral_norm_matches_pytorch_in_training_and_evaluation(source, shape):
    ours, theirs = _pair(source)
    lm.nn.utils.spectral_norm(ours, n_power_iterations=2)
    torch.nn.utils.spectral_norm(theirs, n_power_iterations=2)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    for step in range(2):  # the power iteration moves u and v as PyTorch's does
        _step(ours, theirs, shape, seed=step)
        for k in ("weight_u", "weight_v"):
            np.testing.assert_allclose(getattr(ours, k).numpy(), getattr(theirs, k).numpy(),
                                       rtol=1e-9, atol=1e-12)
    ours.eval(), theirs.eval()
    before = ours.weight_u.numpy().copy()
    _step(ours, theirs, shape, seed=5)
    np.testing.assert_array_equal(ours.weight_u.numpy(), before)  # no iteration in eval
    lm.nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-10)


def test_applying_twice_or_removing_what_is_not_there_says_so():
    layer = lm.nn.utils.weight_norm(lm.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="already has one"):
        lm.nn.utils.weight_norm(layer)
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        lm.nn.utils.remove_spectral_norm(layer)


@pytest.mark.parametrize("source, shape", LAYERS, ids=[s for s, _ in LAYERS])
@pytest.mark.parametrize("dim", [0, None])
def test_parametrized_weight_norm_matches_pytorch(source, shape, dim):
    ours, theirs = _pair(source)
    lm.nn.utils.parametrizations.weight_norm(ours, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(theirs, dim=dim)
    assert type(ours).__name__ == type(theirs).__name__
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-12)
    _step(ours, theirs, shape)
    assert repr(ours) == repr(theirs).replace("_WeightNorm", "_WeightNorm")
    lm.nn.utils.parametrize.remove_parametrizations(ours, "weight")
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight")
    assert type(ours).__name__ == type(theirs).__name__
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                               rtol=1e-12)


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).mT

    class Scaled(lib.nn.Module):
        def forward(self, x):
            return 2 * x

    return Symmetric(), Scaled()


@pytest.mark.parametrize("leave", [True, False])
def test_a_chain_of_user_parametrizations_matches_pytorch(leave):
    ours, theirs = _pair("Linear(3, 3)")
    for lib, model in ((lm, ours), (torch, theirs)):
        for p in _symmetric(lib):
            lib.nn.utils.parametrize.register_parametrization(model, "weight", p)
        assert lib.nn.utils.parametrize.is_parametrized(model, "weight")
        assert not lib.nn.utils.parametrize.is_parametrized(model, "bias")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    _step(ours, theirs, (4, 3))
    lm.nn.utils.parametrize.remove_parametrizations(ours, "weight", leave_parametrized=leave)
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight",
                                                        leave_parametrized=leave)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy())
    assert not lm.nn.utils.parametrize.is_parametrized(ours)


@pytest.mark.parametrize("source, shape", LAYERS, ids=[s for s, _ in LAYERS])
def test_parametrized_spectral_norm_matches_pytorch_in_training_and_evaluation(source, shape):
    ours, theirs = _pair(source)
    lm.nn.utils.parametrizations.spectral_norm(ours, n_power_iterations=2)
    torch.nn.utils.parametrizations.spectral_norm(theirs, n_power_iterations=2)
    assert type(ours).__name__ == type(theirs).__name__
    assert list(ours.state_dict()) == list(theirs.state_dict())
    # the vectors start at random draws: start from PyTorch's
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    u, v = "parametrizations.weight.0._u", "parametrizations.weight.0._v"
    for step in range(3):  # each training forward iterates u and v as PyTorch's does
        _step(ours, theirs, shape, seed=step)
        for k in (u, v):
            np.testing.assert_allclose(ours.state_dict()[k].numpy(),
                                       theirs.state_dict()[k].numpy(), rtol=1e-9, atol=1e-12)
    ours.eval(), theirs.eval()
    before = ours.state_dict()[u].numpy().copy()
    _step(ours, theirs, shape, seed=5)
    np.testing.assert_array_equal(ours.state_dict()[u].numpy(), before)  # none in eval
    # the iteration converges: sigma becomes the largest singular value
    fresh = lm.nn.utils.parametrizations.spectral_norm(_pair(source)[0])
    for _ in range(50):
        matrix = fresh.weight.detach().numpy()
    matrix = (matrix.swapaxes(0, 1) if source.startswith("ConvTranspose") else matrix)
    assert np.linalg.norm(matrix.reshape(matrix.shape[0], -1), 2) == pytest.approx(1, rel=1e-3)


def test_parametrized_spectral_norm_of_a_vector_normalises_it():
    theirs, ours = torch.nn.Linear(3, 4).double(), lm.nn.Linear(3, 4).to(lm.float64)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    torch.nn.utils.parametrizations.spectral_norm(theirs, name="bias")
    lm.nn.utils.parametrizations.spectral_norm(ours, name="bias")
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_allclose(ours.bias.detach().numpy(), theirs.bias.detach().numpy(),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="n_power_iterations"):
        lm.nn.utils.parametrizations.spectral_norm(lm.nn.Linear(2, 2), n_power_iterations=0)
