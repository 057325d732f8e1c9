"""nn.Module's tree API against PyTorch's: the same model written in both, walked, edited,
hooked, saved with tied weights and loaded across."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _model(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.fc(x))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Linear(3, 4, bias=False)
            self.blocks = nn.ModuleList([Block(), Block()])
            self.head = nn.Linear(4, 3, bias=False)
            self.head.weight = nn.Parameter(self.embed.weight.detach().clone().t()
                                            .contiguous())
            self.tied = self.blocks[0].fc  # the same module under a second name

        def forward(self, x):
            h = self.embed(x)
            for block in self.blocks:
                h = block(h)
            return self.head(h)

    return Net()


def test_the_tree_walks_as_pytorchs() -> None:
    ours, theirs = _model(lamina), _model(torch)
    assert ([n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()])
    assert ([n for n, _ in ours.named_modules(remove_duplicate=False)]
            == [n for n, _ in theirs.named_modules(remove_duplicate=False)])
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert ([n for n, _ in ours.named_parameters(remove_duplicate=False)]
            == [n for n, _ in theirs.named_parameters(remove_duplicate=False)])
    assert list(ours.state_dict()) == list(theirs.state_dict())
    order = {lib: [] for lib in ("ours", "theirs")}
    ours.apply(lambda m: order["ours"].append(type(m).__name__))
    theirs.apply(lambda m: order["theirs"].append(type(m).__name__))
    assert order["ours"] == order["theirs"]
    assert ours.get_submodule("blocks.1.fc").in_features == 4
    assert tuple(ours.get_parameter("blocks.0.fc.bias").shape) == (4,)
    with pytest.raises(AttributeError, match="no attribute `nope`"):
        ours.get_submodule("blocks.nope")


def test_a_pytorch_state_dict_with_shared_modules_loads_and_gives_the_same_output() -> None:
    ours, theirs = _model(lamina), _model(torch)
    report = ours.load_state_dict({k: v.detach().numpy() for k, v in
                                   theirs.state_dict().items()})
    assert report.missing_keys == [] and report.unexpected_keys == []
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(lamina.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
    back = theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    assert back.missing_keys == [] and back.unexpected_keys == []


def test_hooks_edit_arguments_and_outputs_as_pytorchs_do() -> None:
    results = []
    for lib in (lamina, torch):
        lib.manual_seed(0)
        layer = lib.nn.Linear(2, 2)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
            layer.bias.zero_()
        calls = []

        def after(m, args, out, calls=calls):
            calls.append(args[0].tolist())
            return out + 1

        pre = layer.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
        post = layer.register_forward_hook(after)
        first = layer(lib.ones(1, 2)).tolist()
        pre.remove()
        post.remove()
        second = layer(lib.ones(1, 2)).tolist()
        results.append((first, second, calls))
    assert results[0] == results[1]


def test_editing_the_tree() -> None:
    for lib in (lamina, torch):
        layer = lib.nn.Linear(2, 2)
        layer.register_parameter("scale", lib.nn.Parameter(lib.ones(2)))
        assert sorted(dict(layer.named_parameters())) == ["bias", "scale", "weight"]
        with pytest.raises(TypeError):
            layer.register_parameter("bad", lib.ones(2))
        seq = lib.nn.Sequential()
        seq.add_module("fc", layer)
        seq.register_module("act", lib.nn.ReLU())
        assert [n for n, _ in seq.named_children()] == ["fc", "act"]
        seq.requires_grad_(False)
        assert not any(p.requires_grad for p in seq.parameters())
        seq.requires_grad_()
        (seq(lib.ones(3, 2)).sum() + 0).backward()
        seq.zero_grad(set_to_none=False)
        assert all(float(p.grad.abs().sum()) == 0 for p in seq.parameters()
                   if p.grad is not None)
        assert seq.fc.weight.grad is not None
        seq.zero_grad()
        assert all(p.grad is None for p in seq.parameters())
        assert seq.double().fc.weight.dtype == lib.float64
        assert seq.to(lib.float32).fc.weight.dtype == lib.float32
        assert seq.to("cpu") is seq and seq.cpu() is seq
        assert isinstance(seq, lib.nn.Module)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_recurrent_cells_match_pytorch_step_by_step(kind: str) -> None:
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((3, 2, 5))  # 3 steps of a batch of 2
    theirs = getattr(torch.nn, kind)(5, 4).double()
    ours = getattr(lamina.nn, kind)(5, 4).double()
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    results = []
    for lib, cell in ((lamina, ours), (torch, theirs)):
        x = lib.tensor(xs, requires_grad=True)
        state, outs = None, []
        for t in range(3):
            state = cell(x[t], state)
            outs.append(state[0] if kind == "LSTMCell" else state)
        total = sum((o * (i + 1)).sum() for i, o in enumerate(outs))
        total.backward()
        results.append((lib.stack(outs).detach().numpy(), x.grad.numpy(),
                        cell.weight_hh.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    single = ours(lamina.tensor(xs[0, 0]))  # an unbatched input gives unbatched states
    assert (single[0] if kind == "LSTMCell" else single).shape == (4,)


def test_initialisers_match_pytorchs_definitions() -> None:
    for lib in (lamina, torch):
        eye = lib.nn.init.eye_(lib.empty(2, 3))
        assert eye.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
        kernel = lib.nn.init.dirac_(lib.empty(4, 2, 3), groups=2)
        x = lib.tensor(np.random.default_rng(0).standard_normal((1, 4, 5)))
        out = lib.nn.functional.conv1d(x, kernel.double(), padding=1, groups=2)
        # a dirac kernel passes its input through: in each of the 2 groups, output
        # channel d of the group is input channel d of the group
        assert np.allclose(out.numpy(), x.numpy())
        w = lib.nn.init.sparse_(lib.empty(10, 6), sparsity=0.3)
        assert all(int((w[:, j] == 0).sum()) == 3 for j in range(6))
    lamina.manual_seed(0)
    w = lamina.nn.init.trunc_normal_(lamina.empty(50000), mean=1.0, std=2.0, a=-1.0, b=2.0)
    assert w.min().item() >= -1.0 and w.max().item() <= 2.0
    torch.manual_seed(0)
    t = torch.nn.init.trunc_normal_(torch.empty(50000), mean=1.0, std=2.0, a=-1.0, b=2.0)
    assert abs(w.mean().item() - t.mean().item()) < 0.02
    assert abs(w.std().item() - t.std().item()) < 0.02


def _keyed(lib):
    nn = lib.nn
    from collections import OrderedDict

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.trunk = nn.Sequential(OrderedDict([("fc", nn.Linear(3, 4)), ("act", nn.ReLU())]))
            self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2), "box": nn.Linear(4, 1)})
            self.scales = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.zeros(1)])
            self.extra = nn.ParameterDict({"temp": nn.Parameter(lib.ones(1))})

        def forward(self, x):
            h = self.trunk(x)
            return self.heads["cls"](h) * self.scales[0] * self.extra["temp"]

    return Net()


def test_keyed_and_parameter_containers_name_things_as_pytorch() -> None:
    ours, theirs = _keyed(lamina), _keyed(torch)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(2).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(ours(lamina.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert sorted(ours.heads) == sorted(theirs.heads) and "cls" in ours.heads
    assert len(ours.scales) == len(theirs.scales) == 2
    assert isinstance(ours.scales[1], lamina.nn.Parameter)
    ours.heads.pop("box")
    assert list(ours.heads.keys()) == ["cls"]
    again = lamina.nn.from_config(ours.trunk.to_config())
    assert list(again.state_dict()) == ["fc.weight", "fc.bias"]
    with pytest.raises(TypeError, match=r"hold them in nn\.ModuleDict"):
        ours.plain = {"a": lamina.nn.Linear(2, 2)}
