"""`state_dict()` as PyTorch's: tensors that share the parameters' memory, in PyTorch's
order, with keep_vars, prefix, destination and non-persistent buffers; and the idioms
built on it (a deep-copied snapshot, an EMA model) give PyTorch's values."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3)
            self.bn = nn.BatchNorm2d(2)
            self.fc = nn.Linear(8, 3)
            self.register_buffer("scale", lib.ones(3))
            self.register_buffer("cache", lib.zeros(3), persistent=False)
            self.register_buffer("later", None)

        def forward(self, x):
            h = self.bn(self.conv(x)).relu()
            return self.fc(h.reshape(len(x), -1)) * self.scale

    return Net()


def _pair():
    ours, theirs = _net(lamina), _net(torch)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def test_names_order_and_kinds_are_pytorchs() -> None:
    ours, theirs = _pair()
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(tsd)  # a layer's parameters, its buffers, then its children
    assert "cache" not in sd and "later" not in sd
    assert type(sd).__name__ == type(tsd).__name__ == "OrderedDict"
    for k, v in sd.items():
        assert isinstance(v, lamina.Tensor) and not v.requires_grad, k
        np.testing.assert_array_equal(v.numpy(), tsd[k].numpy())
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    keep, tkeep = ours.state_dict(keep_vars=True), theirs.state_dict(keep_vars=True)
    assert keep["fc.weight"] is ours.fc.weight and tkeep["fc.weight"] is theirs.fc.weight
    assert keep["fc.weight"].requires_grad
    into: dict = {}
    assert ours.state_dict(destination=into, prefix="m.") is into
    assert list(into) == list(theirs.state_dict(prefix="m."))


def test_entries_share_memory_with_the_parameters() -> None:
    ours, theirs = _pair()
    for model in (ours, theirs):
        sd = model.state_dict()
        sd["fc.bias"].copy_(type(sd["fc.bias"])([1.0, 2.0, 3.0]) if model is theirs
                            else lamina.tensor([1.0, 2.0, 3.0]))
        sd["scale"].mul_(2)
    np.testing.assert_array_equal(ours.fc.bias.detach().numpy(), [1, 2, 3])
    np.testing.assert_array_equal(theirs.fc.bias.detach().numpy(), [1, 2, 3])
    np.testing.assert_array_equal(ours.scale.numpy(), theirs.scale.numpy())


def _train_step(lib, model, opt, x, y):
    loss = lib.nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()


def test_a_deep_copied_snapshot_and_an_ema_model_match_pytorch() -> None:
    ours, theirs = _pair()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 1, 4, 4), np.float32), rng.standard_normal((4, 3), np.float32)
    results = {}
    for lib, model in ((lamina, ours), (torch, theirs)):
        best = copy.deepcopy(model.state_dict())
        ema = copy.deepcopy(model)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            _train_step(lib, model, opt, lib.tensor(x), lib.tensor(y))
            with lib.no_grad():  # timm's ModelEmaV3 update
                msd = model.state_dict()
                for k, v in ema.state_dict().items():
                    if v.is_floating_point():
                        v.copy_(v * 0.9 + 0.1 * msd[k].detach())
        trained = {k: v.detach().clone() for k, v in model.state_dict().items()}
        model.load_state_dict(best)
        results[lib.__name__] = (
            {k: v.numpy() for k, v in ema.state_dict().items()},
            {k: v.numpy() for k, v in trained.items()},
            {k: v.detach().numpy() for k, v in model.state_dict().items()},
            {k: v.numpy() for k, v in best.items()})
    for ours_part, theirs_part in zip(results["lamina"], results["torch"]):
        assert list(ours_part) == list(theirs_part)
        for k in ours_part:
            np.testing.assert_allclose(ours_part[k], theirs_part[k], rtol=1e-5, atol=1e-6,
                                       err_msg=k)
    ema_sd, trained_sd, restored_sd, best_sd = results["lamina"]
    assert not np.allclose(trained_sd["fc.weight"], best_sd["fc.weight"])  # it trained
    np.testing.assert_array_equal(restored_sd["fc.weight"], best_sd["fc.weight"])


def test_assigning_a_tensor_to_a_buffer_keeps_it_a_buffer() -> None:
    for lib in (lamina, torch):
        model = _net(lib)
        model.scale = lib.full((3,), 5.0)
        model.later = lib.zeros(2)
        assert "scale" in dict(model.named_buffers()) and "later" in model.state_dict()
        np.testing.assert_array_equal(model.state_dict()["scale"].numpy(), [5, 5, 5])


def test_nn_buffer_registers_as_pytorchs() -> None:
    names = {}
    for lib in (lamina, torch):
        class Net(lib.nn.Module):
            def __init__(self, lib):
                super().__init__()
                self.a = lib.nn.Buffer(lib.ones(2))
                self.b = lib.nn.Buffer(lib.zeros(1), persistent=False)
                self.fc = lib.nn.Linear(2, 1)

        net = Net(lib)
        assert type(net.a) is (lamina.Tensor if lib is lamina else torch.Tensor)
        names[lib.__name__] = (list(net.state_dict()), [n for n, _ in net.named_buffers()])
    assert names["lamina"] == names["torch"]


def test_parameters_and_buffers_take_pytorchs_recurse_argument() -> None:
    ours, theirs = _pair()
    for kw in ({}, {"recurse": False}):
        assert ([tuple(p.shape) for p in ours.parameters(**kw)]
                == [tuple(p.shape) for p in theirs.parameters(**kw)])
        assert ([n for n, _ in ours.named_buffers(**kw)]
                == [n for n, _ in theirs.named_buffers(**kw)])
        assert len(list(ours.buffers(**kw))) == len(list(theirs.buffers(**kw)))


def test_a_mismatched_state_dict_is_refused_in_pytorchs_words():
    messages = []
    for lib in (torch, lamina):
        model = lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.ReLU())
        with pytest.raises(RuntimeError) as caught:
            model.load_state_dict({"0.weight": lib.zeros(4, 3), "0.bias": lib.zeros(4),
                                   "x": lib.zeros(1)})
        messages.append(str(caught.value).replace("torch.", "lamina."))
    assert messages[0] == messages[1]
