"""Layers: registration, state dicts, configs, gradients and errors, for every layer type."""

from __future__ import annotations

import numpy as np
import pytest
from layer_cases import LAYER_CASES, LOG_PROB_INPUTS, NOT_DERIVATIVES, flat_outputs

import lamina as lm
import lamina.functions as F
import lamina.nn as nn


def _build(name):
    cfg, make = LAYER_CASES[name]
    lm.manual_seed(1)
    layer = nn.from_config(cfg)
    x = make(np.random.default_rng(0))
    return layer, x


def _inputs(x):
    """A case's input: one array, or a tuple of them (a loss takes input and target)."""
    return list(x) if isinstance(x, tuple) else [x]


def _run(layer, x, seed=5):
    lm.manual_seed(seed)  # the same dropout mask on every call
    return [y.array.copy() for y in flat_outputs(layer(*map(lm.tensor, _inputs(x))))]


def test_every_registered_layer_has_a_case() -> None:
    builtin = {t for t in nn.layer_types() if not t.startswith("User")}
    assert builtin == set(LAYER_CASES)


@pytest.mark.parametrize("name", sorted(LAYER_CASES))
def test_config_round_trip_gives_identical_outputs(name) -> None:
    layer, x = _build(name)
    cfg = layer.to_config()
    assert cfg == nn.from_config(cfg).to_config()
    clone = nn.Layer.from_config(cfg)
    clone.load_state_dict(layer.state_dict())
    for a, b in zip(_run(layer, x), _run(clone, x)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(LAYER_CASES))
def test_state_dict_round_trip_gives_identical_outputs(name) -> None:
    layer, x = _build(name)
    _run(layer, x)  # one training step moves batch-norm statistics away from their defaults
    state = layer.state_dict()
    lm.manual_seed(99)
    other = nn.from_config(layer.to_config())
    other.load_state_dict(state)
    for mode in ("train", "eval"):
        getattr(layer, mode)()
        getattr(other, mode)()
        for a, b in zip(_run(layer, x), _run(other, x)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(set(LAYER_CASES) - NOT_DERIVATIVES))
def test_gradients_wrt_input_and_parameters(name) -> None:
    layer, x = _build(name)
    for p in list(layer.parameters()) + list(layer.buffers()):
        if p.dtype == np.float32:
            p.array = p.array.astype(np.float64)
    params = list(layer.parameters())
    x, *rest = _inputs(x)
    xt = lm.tensor(x.astype(np.float64) if x.dtype.kind == "f" else x,
                   requires_grad=x.dtype.kind == "f")
    rest = [lm.tensor(a.astype(np.float64) if a.dtype.kind == "f" else a) for a in rest]

    def fn(x, *ps):
        lm.manual_seed(3)
        if name in LOG_PROB_INPUTS:
            x = F.log_softmax(x, -1)
        return tuple(flat_outputs(layer(x, *rest)))

    assert lm.gradcheck(fn, [xt, *params], atol=1e-5)


def test_registration_and_dotted_names() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Sequential(nn.Linear(4, 2)))
    names = [n for n, _ in model.named_parameters()]
    assert names == ["0.weight", "0.bias", "2.0.weight", "2.0.bias"]
    assert len(list(model.children())) == 3 and len(model) == 3
    assert isinstance(model[2][0], nn.Linear) and len(model[:2]) == 2
    model.append(nn.Tanh())
    assert len(model) == 4
    with pytest.raises(ValueError, match="may not be empty or contain '.'"):
        setattr(model, "a.b", nn.ReLU())
    fc = nn.Linear(2, 2, bias=False)
    assert [n for n, _ in fc.named_parameters()] == ["weight"] and fc.bias is None


class _Blocks(nn.Layer):
    def __init__(self, n: int) -> None:
        super().__init__()
        self.blocks = nn.LayerList(nn.Linear(2, 2) for _ in range(n))
        self.norm = nn.BatchNorm1d(2)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


def test_a_layer_list_registers_its_layers() -> None:
    model = _Blocks(3)
    assert list(model.state_dict()) == [*(f"blocks.{i}.{p}" for i in range(3)
                                          for p in ("weight", "bias")),
                                        "norm.weight", "norm.bias", "norm.running_mean",
                                        "norm.running_var", "norm.num_batches_tracked"]
    assert len(model.blocks) == 3 and isinstance(model.blocks[1:], nn.LayerList)
    assert model.blocks[-1] is list(model.blocks)[2]
    model.blocks.append(nn.Linear(2, 2)).extend([nn.Linear(2, 2)])
    assert len(list(model.parameters())) == 2 * 5 + 2
    model.eval()
    assert not model.blocks[4].training
    x = lm.tensor(np.ones((4, 2), np.float32))
    model.train()
    model(x).sum().backward()
    assert all(p.grad is not None for p in model.blocks.parameters())
    with pytest.raises(TypeError, match="ModuleList: it holds layers but has no forward"):
        model.blocks(x)
    with pytest.raises(TypeError, match="ModuleList: expected a Layer, got int"):
        model.blocks.append(3)


@pytest.mark.parametrize("value, what", [
    ([nn.Linear(2, 2)], "layers in a plain list"),
    ((nn.ReLU(), nn.Linear(2, 2)), "layers in a plain tuple"),
    ({"a": nn.Linear(2, 2)}, "layers in a plain dict"),
    ([nn.Parameter(np.zeros(2, np.float32))], "parameters in a plain list"),
])
def test_layers_or_parameters_in_a_plain_container_are_refused(value, what) -> None:
    model = nn.Sequential()
    with pytest.raises(TypeError, match=f"Sequential.hidden: {what} are not registered"):
        model.hidden = value
    model.sizes, model.cache = [3, 4], (lm.tensor(np.zeros(2)),)  # plain values stay allowed
    assert model.sizes == [3, 4] and not hasattr(model, "hidden")


def test_a_shared_parameter_is_listed_once() -> None:
    a = nn.Linear(3, 3)
    model = nn.Sequential(a, a)
    assert len(list(model.parameters())) == 2


def test_buffers_train_eval_and_zero_grad() -> None:
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3), nn.Dropout(0.5))
    assert [n for n, _ in model.named_buffers()] == [
        "1.running_mean", "1.running_var", "1.num_batches_tracked"]
    assert set(model.state_dict()) == {"0.weight", "0.bias", "1.weight", "1.bias",
                                       "1.running_mean", "1.running_var", "1.num_batches_tracked"}
    model.eval()
    assert not any(layer.training for _, layer in model.named_layers())
    x = lm.tensor(np.ones((4, 3), np.float32))
    np.testing.assert_array_equal(model(x).array, model(x).array)  # dropout off, running stats
    model.train()
    model(x).sum().backward()
    assert model[0].weight.grad is not None
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    assert int(model[1].num_batches_tracked.array) == 1


def test_load_state_dict_names_every_problem() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    state = model.state_dict()
    state["1.weight"] = np.zeros((5, 4))
    with pytest.raises(RuntimeError, match=r"size mismatch for 1.weight: copying a param with "
                       r"shape lamina\.Size\(\[5, 4\]\) from checkpoint, the shape in current "
                       r"model is lamina\.Size\(\[2, 4\]\)"):
        model.load_state_dict(state)
    state = model.state_dict()
    del state["0.bias"]
    state["extra.weight"] = np.zeros(1)
    with pytest.raises(RuntimeError, match=r'^Error\(s\) in loading state_dict for Sequential:\n'
                       r'\tMissing key\(s\) in state_dict: "0.bias". \n'
                       r'\tUnexpected key\(s\) in state_dict: "extra.weight". $'):
        model.load_state_dict(state)
    report = model.load_state_dict(state, strict=False)
    assert report == (["0.bias"], ["extra.weight"])
    assert report.missing_keys == ["0.bias"] and report.unexpected_keys == ["extra.weight"]


def test_load_state_dict_keeps_dtype_and_copies() -> None:
    fc = nn.Linear(2, 2)
    w = np.arange(4.0).reshape(2, 2)
    fc.load_state_dict({"weight": w, "bias": np.zeros(2)})
    assert fc.weight.dtype == np.float32
    w[0, 0] = 100
    assert fc.weight.array[0, 0] == 0


def test_repr_shows_the_tree_as_pytorch_does() -> None:
    text = repr(nn.Sequential(nn.Linear(4, 2), nn.Sequential(nn.ReLU(), nn.Linear(8, 3))))
    assert text == ("Sequential(\n  (0): Linear(in_features=4, out_features=2, bias=True)\n"
                    "  (1): Sequential(\n    (0): ReLU()\n"
                    "    (1): Linear(in_features=8, out_features=3, bias=True)\n  )\n)")


def test_shape_errors_name_the_layer_path_and_shapes() -> None:
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(),
                          nn.Sequential(nn.Linear(8, 8), nn.Linear(5, 2)))
    with pytest.raises(lm.ShapeError, match=r"^2\.1 \(Linear\): linear: .*expected \(\.\.\., 5\).*got \(3, 8\)"):
        model(lm.tensor(np.ones((3, 4), np.float32)))
    with pytest.raises(lm.ShapeError, match=r"^Conv2d: .*expected 1 channels \(weight \(4, 1, 3, 3\), groups=1\), got input \(1, 5, 28, 28\); the input \(5, 28, 28\) was read as one sample without a batch dim; if it is a batch of one-channel samples, give them their channel axis: \(5, 1, 28, 28\) \(in a job, data\.shape: \[1, 28, 28\]\)$"):
        nn.Conv2d(1, 4, 3)(lm.tensor(np.ones((5, 28, 28), np.float32)))
    with pytest.raises(lm.ShapeError, match=r"^Conv1d: .*expected 2 channels .*got input \(1, 5, 40\); the input \(5, 40\) was read as one sample without a batch dim$"):
        nn.Conv1d(2, 4, 3)(lm.tensor(np.ones((5, 40), np.float32)))  # two channels: no guess
    with pytest.raises(lm.ShapeError, match=r"^BatchNorm2d: expected input of 4 dims with 3 channels.*got shape \(2, 3\)"):
        nn.BatchNorm2d(3)(lm.tensor(np.ones((2, 3), np.float32)))
    with pytest.raises(lm.ShapeError, match=r"LSTM: expected input \(B, T, F\) or unbatched \(T, F\), with F = input_size = 3; got shape \(2, 5, 4\)"):
        nn.LSTM(3, 4, batch_first=True)(lm.tensor(np.ones((2, 5, 4), np.float32)))
    with pytest.raises(lm.ShapeError, match=r"GRU: expected initial state of shape \(1, 2, 4\); got \(1, 3, 4\)"):
        nn.GRU(3, 4, batch_first=True)(lm.tensor(np.ones((2, 5, 3), np.float32)),
                     lm.tensor(np.zeros((1, 3, 4), np.float32)))


def test_float64_input_to_a_float32_layer_names_the_layer_and_both_fixes() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = np.random.default_rng(0).standard_normal((5, 3))  # NumPy's default: float64
    with pytest.raises(lm.DTypeError, match=r"^0 \(Linear\): the input is float64 but the "
                       r"layer's parameters are float32; convert the input \(lm.tensor\(x, "
                       r"dtype='float32'\).*model.to\('float64'\)\)$"):
        model(lm.tensor(x))
    with pytest.raises(lm.DTypeError, match=r"^GRU: input 1 is float64"):  # the state too
        nn.GRU(3, 4, batch_first=True)(lm.tensor(x[None], dtype="float32"), lm.tensor(np.zeros((1, 1, 4))))
    assert issubclass(lm.DTypeError, lm.ShapeError)  # located and reported as shape errors
    expected = model(lm.tensor(x, dtype="float32")).array
    assert model.to("float64") is model
    assert {p.dtype for p in model.parameters()} == {np.dtype(np.float64)}
    np.testing.assert_allclose(model(lm.tensor(x)).array, expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="must stay floating point; got dtype int64"):
        model.to("int64")


def test_layer_to_converts_buffers_and_drops_gradients_but_keeps_the_parameters() -> None:
    norm = nn.BatchNorm1d(3)
    weight = norm.weight
    norm(lm.tensor(np.ones((4, 3), np.float32))).sum().backward()
    assert norm.weight.grad is not None
    norm.to(np.float64)
    assert norm.weight is weight and weight.grad is None  # optimizers keep their references
    assert norm.running_mean.dtype == norm.running_var.dtype == np.float64
    assert norm.num_batches_tracked.dtype.kind == "i"  # integer buffers stay
    np.testing.assert_array_equal(norm.running_var.array, np.float32(0.9))  # 0.9*1 + 0.1*0, kept


def test_an_op_that_promotes_gives_each_input_its_gradient_in_its_own_dtype() -> None:
    x = lm.tensor(np.arange(6.0).reshape(2, 3))  # float64
    w = lm.tensor(np.ones((4, 3), np.float32), requires_grad=True)
    y = F.linear(x, w)
    assert y.dtype == np.float64  # NumPy's promotion, as the functions document
    y.sum().backward()
    assert w.grad.dtype == np.float32
    np.testing.assert_array_equal(w.grad, np.tile([3.0, 5.0, 7.0], (4, 1)))


@pytest.mark.parametrize("layer, shape, fix", [
    (nn.Sequential(nn.Linear(4, 8), nn.Linear(5, 2)), (3, 4), "in_features=8"),
    (nn.Conv2d(3, 4, 3), (2, 1, 6, 6), "in_channels=1"),
    (nn.Conv1d(3, 4, 3), (2, 5, 6), "in_channels=5"),
    (nn.BatchNorm1d(3), (2, 6), "num_features=6"),
    (nn.BatchNorm2d(3), (2, 6, 4, 4), "num_features=6"),
    (nn.LSTM(3, 4, batch_first=True), (2, 5, 7), "input_size=7"),
    (nn.RBM(5, 3), (2, 6), "n_visible=6"),
    (nn.GroupNorm(2, 4), (2, 6, 3), "num_channels=6"),
    (nn.ConvTranspose2d(3, 2, 3), (2, 4, 5, 5), "in_channels=4"),
])
def test_a_size_mismatch_names_the_argument_that_fits(layer, shape, fix) -> None:
    with pytest.raises(lm.ShapeError, match=f"; if the input is right, build the layer with {fix}$"):
        layer(lm.tensor(np.ones(shape, np.float32)))


@pytest.mark.parametrize("layer, args", [
    (nn.Conv2d(3, 4, 3), [(2, 3, 6)]),  # wrong rank: no single argument fits
    (nn.Conv2d(4, 4, 3, groups=2), [(2, 3, 6, 6)]),  # 3 channels cannot split in 2 groups
    (nn.GRU(3, 4, batch_first=True), [(2, 5, 3), (1, 3, 4)]),  # the input is right, its initial state is not
    (nn.GroupNorm(2, 4), [(2, 5, 3)]),  # 5 channels cannot form 2 groups
])
def test_no_fix_is_offered_where_no_argument_fits(layer, args) -> None:
    with pytest.raises(lm.ShapeError) as info:
        layer(*[lm.tensor(np.ones(a, np.float32)) for a in args])
    assert "build the layer with" not in str(info.value)


@pytest.mark.parametrize("cfg, message", [
    ({"type": "Linar", "in_features": 2, "out_features": 2},
     r"model\.type: unknown layer type 'Linar' \(did you mean 'Linear'\?\); one of \[.*'Linear'"),
    ({"type": "Linear", "in_features": 2}, r"model\.out_features: missing, required by Linear"),
    ({"type": "Linear", "in_features": 2, "out_features": 2, "units": 3},
     r"model\.units: unknown argument of Linear; allowed: \['bias', 'in_features', 'out_features'\]"),
    ({"type": "Linear", "in_features": "2", "out_features": 2},
     r"model\.in_features: expected int, got str '2'"),
    ({"type": "Sequential", "layers": [{"type": "ReLU"}, {"type": "Conv2d", "in_channels": 1,
      "out_channels": 2, "kernel_size": 3.5}]},
     r"model\.layers\[1\]\.kernel_size: expected int or tuple\[int, int\], got float 3\.5"),
    ({"type": "GELU", "approximate": "fast"},
     r"model\.approximate: expected one of 'none', 'tanh', got str 'fast'"),
    ({"type": "Sequential", "layers": {"type": "ReLU"}}, r"model\.layers: expected a list"),
    ({"layers": []}, r"model: missing 'type'"),
    ({"type": "Dropout", "p": 1.5}, r"^model: Dropout: p must be in \[0, 1\]; got 1\.5"),
    ({"type": "GroupNorm", "num_groups": 3, "num_channels": 4},
     r"^model: GroupNorm: num_channels must be a multiple of num_groups; got num_groups=3"),
    ({"type": "AdaptiveAvgPool2d", "output_size": [0, 2]},
     r"^model: AdaptiveAvgPool2d: output_size must be an int >= 1 .*; got \[0, 2\]"),
    ({"type": "Softplus", "beta": 0}, r"^model: Softplus: beta must be > 0; got 0"),
    ({"type": "ConvTranspose2d", "in_channels": 2, "out_channels": 2, "kernel_size": 3,
      "output_padding": 1}, r"^model: ConvTranspose2d: conv_transpose2d: output_padding must "
                            r"be smaller than stride or dilation"),
])
def test_config_errors_name_the_path(cfg, message) -> None:
    with pytest.raises(nn.ConfigError, match=message):
        nn.from_config(cfg)


def test_a_global_pool_head_takes_inputs_of_any_size() -> None:
    lm.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(2, 6, 3, padding=1), nn.GroupNorm(3, 6), nn.SiLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))
    rng = np.random.default_rng(0)
    for hw in [(5, 5), (9, 7)]:
        x = rng.standard_normal((4, 2, *hw)).astype(np.float32)
        y = model(lm.tensor(x))
        assert y.shape == (4, 3)
        # Global pooling is the channel mean: the head applied to it by hand agrees.
        features = F.silu(model[1](model[0](lm.tensor(x)))).array.mean(axis=(2, 3))
        np.testing.assert_allclose(y.array, features @ model[5].weight.array.T
                                   + model[5].bias.array, rtol=1e-5, atol=1e-6)


def test_a_strided_transposed_convolution_undoes_the_conv_shape() -> None:
    # An autoencoder's shapes: 28 -> 14 -> 7 by stride-2 convolutions, and back.
    lm.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(4, 8, 3, stride=2, padding=1),
        nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1), nn.ReLU(),
        nn.ConvTranspose2d(4, 1, 3, stride=2, padding=1, output_padding=1))
    x = lm.tensor(np.random.default_rng(0).standard_normal((2, 1, 28, 28)).astype(np.float32))
    assert model[:3](x).shape == (2, 8, 7, 7)
    assert model(x).shape == (2, 1, 28, 28)


def test_group_norm_treats_each_sample_alone_in_training_and_evaluation() -> None:
    lm.manual_seed(0)
    norm = nn.GroupNorm(2, 4)
    x = np.random.default_rng(1).standard_normal((5, 4, 3)).astype(np.float32) * 3 + 1
    whole = norm(lm.tensor(x)).array
    norm.eval()
    alone = np.concatenate([norm(lm.tensor(x[i:i + 1])).array for i in range(5)])
    np.testing.assert_allclose(whole, alone, rtol=1e-6, atol=1e-6)
    groups = whole.reshape(5, 2, -1)
    np.testing.assert_allclose(groups.mean(axis=2), 0, atol=1e-5)
    np.testing.assert_allclose(groups.var(axis=2), 1, atol=1e-3)


def test_user_layers_register_and_round_trip() -> None:
    @nn.register_layer("UserScale")
    class Scale(nn.Layer):
        def __init__(self, factor: float = 2.0) -> None:
            super().__init__()
            self.factor = factor

        def forward(self, x):
            return x * self.factor

        def get_config(self):
            return {"factor": self.factor}

    model = nn.from_config({"type": "Sequential", "layers": [{"type": "UserScale", "factor": 3}]})
    assert model(lm.tensor([1.0])).item() == 3.0
    assert model.to_config() == {"type": "Sequential", "layers": [{"type": "UserScale", "factor": 3}]}
    with pytest.raises(ValueError, match="already registered"):
        nn.register_layer("UserScale")(type("Other", (nn.Layer,), {}))


def test_default_initialisation_matches_pytorch_bounds() -> None:
    lm.manual_seed(0)
    fc = nn.Linear(400, 300)
    bound = 1 / np.sqrt(400)
    assert np.abs(fc.weight.array).max() <= bound and np.abs(fc.weight.array).max() > 0.95 * bound
    assert np.abs(fc.bias.array).max() <= bound
    conv = nn.Conv2d(8, 16, 3, groups=2)
    bound = 1 / np.sqrt(4 * 9)
    assert np.abs(conv.weight.array).max() <= bound
    assert abs(conv.weight.array.std() - bound / np.sqrt(3)) < 0.1 * bound  # std of U(-b, b)
    emb = nn.Embedding(1000, 50)
    assert abs(emb.weight.array.std() - 1) < 0.02
    lstm = nn.LSTM(10, 25, batch_first=True)
    assert max(np.abs(p.array).max() for p in lstm.parameters()) <= 1 / 5
    bn = nn.BatchNorm1d(3)
    np.testing.assert_array_equal(bn.weight.array, 1)
    np.testing.assert_array_equal(bn.running_var.array, 1)


def test_initialisers() -> None:
    t = lm.Tensor(np.empty((200, 300), np.float32))
    nn.init.xavier_uniform_(t)
    a = np.sqrt(6 / 500)
    assert t.array.max() <= a and t.array.max() > 0.95 * a
    nn.init.kaiming_normal_(t, nonlinearity="relu")
    assert abs(t.array.std() - np.sqrt(2 / 300)) < 0.002
    nn.init.orthogonal_(t)
    np.testing.assert_allclose(t.array @ t.array.T, np.eye(200), atol=1e-5)
    nn.init.zeros_(t)
    assert not t.array.any()
    nn.init.ones_(t)
    assert (t.array == 1).all()
    lm.manual_seed(4)
    nn.init.normal_(t, 1.0, 2.0)
    first = t.array.copy()
    lm.manual_seed(4)
    nn.init.normal_(t, 1.0, 2.0)
    np.testing.assert_array_equal(first, t.array)
    assert abs(first.mean() - 1) < 0.05 and abs(first.std() - 2) < 0.05


def test_rbm_cd_statistics_equal_the_free_energy_gradient() -> None:
    lm.manual_seed(0)
    rbm = nn.RBM(6, 4)
    nn.init.normal_(rbm.weight, 0, 0.5)
    rng = np.random.default_rng(0)
    v0 = (rng.random((8, 6)) < 0.5).astype(np.float32)
    vk = rbm.gibbs(v0, k=3)
    assert vk.shape == v0.shape and set(np.unique(vk)) <= {0.0, 1.0}
    loss = rbm.free_energy(lm.tensor(v0)).mean() - rbm.free_energy(lm.tensor(vk)).mean()
    loss.backward()
    pos, neg = rbm.statistics(v0), rbm.statistics(vk)
    for name, p in rbm.named_parameters():
        np.testing.assert_allclose(p.grad, -(pos[name] - neg[name]), rtol=1e-5, atol=1e-6)


def test_rbm_free_energy_matches_brute_force_marginal() -> None:
    lm.manual_seed(0)
    rbm = nn.RBM(3, 2)
    nn.init.normal_(rbm.weight, 0, 1.0)
    nn.init.normal_(rbm.visible_bias, 0, 1.0)
    nn.init.normal_(rbm.hidden_bias, 0, 1.0)
    W, b, c = (p.array.astype(np.float64) for p in (rbm.weight, rbm.visible_bias, rbm.hidden_bias))
    v = np.array([[1, 0, 1], [0, 1, 1]], np.float64)
    hs = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float64)
    # F(v) = -log sum_h exp(-E(v, h)), E = -v.b - h.c - h W v
    brute = -np.log(np.exp(v @ b[:, None] + (hs @ c)[None, :] + v @ W.T @ hs.T).sum(axis=1))
    got = rbm.free_energy(lm.tensor(v.astype(np.float32))).array
    np.testing.assert_allclose(got, brute, rtol=1e-5)
    assert rbm.reconstruction_error(v) > 0
    assert rbm.pseudo_log_likelihood(v) < 0


def test_upsample_decoder_doubles_each_side_and_refuses_bad_configs() -> None:
    decoder = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(8, 4, 3, padding=1),
                            nn.Upsample(scale_factor=2, mode="bilinear"),
                            nn.Conv2d(4, 1, 3, padding=1))
    x = lm.tensor(np.random.default_rng(0).standard_normal((2, 8, 7, 7)).astype(np.float32))
    assert decoder(x).shape == (2, 1, 28, 28)
    up = nn.Upsample(scale_factor=2)(x).array
    np.testing.assert_array_equal(up, x.array.repeat(2, axis=2).repeat(2, axis=3))
    for bad, words in [({}, "give exactly one of size and scale_factor"),
                       ({"size": 4, "scale_factor": 2}, "give exactly one of size and"),
                       ({"scale_factor": 2, "mode": "cubic"}, "mode must be one of"),
                       ({"size": 4, "align_corners": True}, "align_corners is for the linear"),
                       ({"size": 0}, "size must be an int >= 1")]:
        with pytest.raises(nn.ConfigError, match=f"Upsample: {words}"):
            nn.from_config({"type": "Upsample", **bad})
    with pytest.raises(lm.ShapeError, match="mode .bilinear. resamples 4-d input"):
        nn.Upsample(scale_factor=2, mode="bilinear")(lm.tensor(np.ones((1, 2, 3), np.float32)))
    for flag in (False, True):  # any value set, as PyTorch refuses it, in the layer or not
        with pytest.raises(ValueError, match="interpolate: align_corners is for the linear"):
            F.interpolate(x, scale_factor=2, align_corners=flag)


def test_group_norm_in_float32_keeps_float64_accuracy_and_takes_an_empty_batch() -> None:
    """The fused op sums per channel and per group; with a large offset in the input its
    float32 results and gradients still match float64's, and an empty batch passes."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4, 8, 6, 5)) * 3 + 100
    w, b, gy = rng.standard_normal(8), rng.standard_normal(8), rng.standard_normal(x.shape)
    results = []
    for dtype in (np.float64, np.float32):
        ts = [lm.tensor(a.astype(dtype), requires_grad=True) for a in (x, w, b)]
        y = F.group_norm(ts[0], 4, ts[1], ts[2])
        y.backward(lm.tensor(gy.astype(dtype)))
        assert y.dtype == dtype
        results.append([y.array, *(t.grad for t in ts)])
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)
    empty = lm.tensor(np.ones((0, 8, 3), np.float32), requires_grad=True)
    F.group_norm(empty, 4).sum().backward()
    assert empty.grad.shape == (0, 8, 3)
