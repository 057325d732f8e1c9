"""Layers against PyTorch's: each line builds the same module in both frameworks (the
source evaluated with `nn` bound to torch.nn, then to lamina.nn), lamina's loads torch's
state dict, and both run on the same float64 inputs in training and in evaluation mode:
outputs, and the gradients of the inputs and every parameter, to 1e-8. Random layers are
compared in evaluation mode, and by the statistics of their masks in training."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn

torch = pytest.importorskip("torch")

LINES = [
    ("PixelShuffle(3)", [(2, 18, 2, 3)]),
    ("PixelUnshuffle(2)", [(2, 3, 4, 6)]),
    ("Unflatten(1, (2, 3))", [(4, 6)]),
    ("Unfold((2, 3), dilation=(2, 1), padding=1, stride=(1, 2))", [(2, 3, 5, 6)]),
    ("Fold((4, 5), 2, padding=1)", [(2, 12, 30)]),
    ("ZeroPad2d((1, 2, 0, 3))", [(2, 3, 4, 4)]),
    ("ConstantPad1d((2, 1), 3.5)", [(2, 3, 4)]),
    ("ConstantPad3d(1, -1.0)", [(1, 2, 2, 3, 2)]),
    ("ReflectionPad1d((3, 1))", [(2, 3, 5)]),
    ("ReflectionPad2d((1, 2, 2, 1))", [(2, 3, 4, 5)]),
    ("ReflectionPad3d(1)", [(1, 2, 3, 3, 3)]),
    ("ReplicationPad1d(2)", [(2, 3, 4)]),
    ("ReplicationPad2d((0, 3, 1, 1))", [(2, 3, 4, 5)]),
    ("ReplicationPad3d((1, 0, 0, 1, 2, 0))", [(1, 2, 3, 3, 3)]),
    ("CircularPad1d((1, 2))", [(2, 3, 4)]),
    ("CircularPad2d(1)", [(2, 3, 4, 5)]),
    ("InstanceNorm1d(3)", [(2, 3, 6)]),
    ("InstanceNorm1d(3, affine=True, track_running_stats=True)", [(2, 3, 6)]),
    ("InstanceNorm2d(3, affine=True)", [(2, 3, 4, 5)]),
    ("InstanceNorm2d(2, momentum=0.3, track_running_stats=True)", [(2, 3, 4)]),
    ("InstanceNorm3d(2, affine=True, track_running_stats=True)", [(2, 2, 3, 2, 3)]),
    ("LocalResponseNorm(3, alpha=0.01, beta=0.6, k=2.0)", [(2, 5, 3, 4)]),
    ("LocalResponseNorm(4)", [(2, 6, 5)]),
    ("Conv3d(4, 6, (2, 3, 2), stride=(1, 2, 1), padding=(1, 0, 1), dilation=(2, 1, 1), "
     "groups=2)", [(2, 4, 5, 6, 5)]),
    ("Conv3d(2, 3, 3, padding=1, bias=False)", [(1, 2, 4, 4, 4)]),
    ("Conv3d(2, 3, (2, 3, 1), padding='same', padding_mode='circular')", [(1, 2, 4, 4, 3)]),
    ("Conv1d(3, 4, 4, padding='same', dilation=2)", [(2, 3, 9)]),
    ("Conv1d(3, 4, 3, padding='valid')", [(2, 3, 9)]),
    ("Conv2d(3, 4, (3, 4), padding='same', padding_mode='reflect')", [(2, 3, 6, 7)]),
    ("Conv2d(3, 4, 3, stride=2, padding=1, padding_mode='replicate')", [(2, 3, 6, 7)]),
    ("Conv1d(3, 6, 3, padding=2, padding_mode='circular', groups=3)", [(2, 3, 5)]),
    ("MaxPool3d((2, 3, 2), stride=(1, 2, 2), padding=1)", [(2, 3, 5, 6, 5)]),
    ("AvgPool3d(3, stride=2, padding=1)", [(2, 3, 5, 6, 5)]),
    ("AdaptiveMaxPool1d(4)", [(2, 3, 9)]),
    ("BatchNorm1d(3, track_running_stats=False)", [(4, 3, 5)]),
    ("BatchNorm2d(3, momentum=None)", [(4, 3, 2, 2)]),
    ("BatchNorm2d(3, bias=False)", [(4, 3, 2, 2)]),
    ("BatchNorm1d(4, affine=False, momentum=0.3)", [(6, 4)]),
    ("GroupNorm(2, 4, bias=False)", [(3, 4, 5)]),
    ("LayerNorm((3, 4), elementwise_affine=False)", [(2, 3, 4)]),
    ("MaxPool2d(3, 2, 1, dilation=2, ceil_mode=True)", [(2, 3, 9, 8)]),
    ("MaxPool1d(2, ceil_mode=True)", [(2, 3, 7)]),
    ("AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False)", [(2, 3, 8, 7)]),
    ("AvgPool2d(2, divisor_override=3)", [(2, 3, 4, 4)]),
    ("AvgPool1d(3, 2, 1, ceil_mode=True)", [(2, 3, 8)]),
    ("MaxPool3d(2, ceil_mode=True)", [(1, 2, 3, 5, 4)]),
    ("AdaptiveMaxPool2d((3, None))", [(2, 3, 7, 5)]),
    ("AdaptiveAvgPool2d((1, 1))", [(2, 3, 7, 5)]),
    ("AdaptiveAvgPool2d((None, 2))", [(2, 3, 7, 5)]),
    ("AdaptiveAvgPool1d(3)", [(2, 3, 8)]),
    ("Bilinear(3, 4, 5)", [(6, 3), (6, 4)]),
    ("CosineSimilarity(dim=0)", [(4, 3), (4, 3)]),
    ("PairwiseDistance(p=3.0, keepdim=True)", [(5, 3), (5, 3)]),
    ("Embedding(7, 3, padding_idx=2)", ["ids (3, 4) < 7"]),
    ("Embedding(7, 3, scale_grad_by_freq=True)", ["ids (3, 4) < 7"]),
    ("EmbeddingBag(7, 3, mode='sum', padding_idx=0)", ["ids (3, 4) < 7"]),
    ("EmbeddingBag(7, 3, mode='max')", ["ids (3, 4) < 7"]),
    ("Dropout1d(0.5)", [(3, 4, 5)]),
    ("Dropout2d(0.5)", [(3, 4, 2, 2)]),
    ("Dropout3d(0.5)", [(3, 4, 2, 2, 2)]),
    ("AlphaDropout(0.3)", [(4, 6)]),
    ("FeatureAlphaDropout(0.3)", [(3, 4, 5)]),
    ("PReLU(3, init=0.1)", [(2, 3, 4)]),
    ("GLU(dim=1)", [(2, 4, 3)]),
    ("Softmin(dim=0)", [(3, 4)]),
    ("Hardtanh(-0.5, 0.7)", [(3, 4)]),
    ("Threshold(0.2, -1.0)", [(3, 4)]),
    ("Upsample(scale_factor=2, mode='bilinear', align_corners=True)", [(1, 2, 3, 4)]),
    ("UpsamplingNearest2d(scale_factor=2)", [(1, 2, 3, 4)]),
    ("UpsamplingBilinear2d(size=(5, 7))", [(1, 2, 3, 4)]),
    ("RMSNorm(4)", [(2, 3, 4)]),
    ("RMSNorm([3, 4], eps=1e-3)", [(2, 3, 4)]),
    ("RMSNorm(4, elementwise_affine=False)", [(2, 3, 4)]),
    ("Hardshrink()", [(2, 5)]),
    ("Softshrink(0.3)", [(2, 5)]),
    ("RReLU(0.1, 0.3)", [(2, 5)]),
    ("Softmax2d()", [(2, 3, 4, 5)]),
    ("BatchNorm3d(3)", [(2, 3, 2, 3, 4)]),
    ("BatchNorm3d(3, affine=False, momentum=None)", [(2, 3, 2, 3, 4)]),
    ("ConvTranspose3d(2, 3, 2, stride=2)", [(2, 2, 3, 3, 3)]),
    ("ConvTranspose3d(4, 2, 3, stride=2, padding=1, output_padding=1, groups=2)",
     [(1, 4, 3, 2, 3)]),
    ("ConvTranspose3d(2, 2, (2, 3, 1), stride=(1, 2, 1), padding=(0, 1, 0), dilation=(2, 1, 1), "
     "bias=False)", [(1, 2, 3, 3, 2)]),
    ("AdaptiveAvgPool3d((2, None, 3))", [(2, 3, 5, 4, 7)]),
    ("AdaptiveAvgPool3d(1)", [(3, 4, 5, 6)]),
    ("AdaptiveMaxPool3d((2, 3, 2))", [(2, 3, 5, 4, 7)]),
    ("LPPool1d(2, 3, stride=2)", [(2, 3, 8)]),
    ("LPPool2d(2, (2, 3), stride=1)", [(2, 3, 5, 7)]),
    ("LPPool2d(2, 2, ceil_mode=True)", [(2, 3, 5, 5)]),
    ("LPPool3d(2, 2)", [(1, 2, 4, 4, 4)]),
    ("ChannelShuffle(3)", [(2, 6, 4, 5)]),
    ("SyncBatchNorm(3)", [(4, 3, 5)]),
    ("SyncBatchNorm(3, affine=False)", [(4, 3, 2, 3, 2)]),
    ("Conv2d(3, 4, 3, padding=1)", [(3, 5, 5)]),
    ("MaxPool2d(2, return_indices=False)", [(3, 5, 5)]),
    ("AvgPool1d(2)", [(3, 6)]),
]
RANDOM = ("Dropout", "AlphaDropout", "FeatureAlphaDropout", "RReLU")


def _inputs(specs, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for spec in specs:
        if isinstance(spec, str):  # integer ids
            out.append(rng.integers(0, 7, (3, 4)))
        else:
            out.append(rng.standard_normal(spec))
    return out


def _build(source):
    torch.manual_seed(0)
    theirs = eval(source, {"__builtins__": {}}, vars(torch.nn)).double()
    lm.manual_seed(0)
    ours = eval(source, {"__builtins__": {}}, vars(nn)).to("float64")
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    result = ours.load_state_dict(state)
    assert result.missing_keys == [] and result.unexpected_keys == []
    return theirs, ours


def _run(theirs, ours, arrays):
    tins = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    lins = [lm.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    ty, ly = theirs(*tins), ours(*lins)
    assert tuple(ly.shape) == tuple(ty.shape)
    np.testing.assert_allclose(ly.array, ty.detach().numpy(), rtol=1e-8, atol=1e-10)
    g = np.random.default_rng(9).standard_normal(tuple(ty.shape))
    if ty.requires_grad:
        (ty * torch.tensor(g)).sum().backward()
        (ly * g).sum().backward()
        for t, a in zip(tins, lins):
            if t.grad is not None:
                np.testing.assert_allclose(a.grad.array, t.grad.numpy(), rtol=1e-8, atol=1e-10)
        theirs_params = dict(theirs.named_parameters())
        for name, p in ours.named_parameters():
            np.testing.assert_allclose(p.grad.array, theirs_params[name].grad.numpy(),
                                       rtol=1e-8, atol=1e-10, err_msg=name)
    for name, buf in ours.named_buffers():  # running statistics moved the same way
        np.testing.assert_allclose(buf.array, theirs.get_buffer(name).numpy(), rtol=1e-10)


# random layers are compared in evaluation here, in training by test_random_layers_drop_...
CASES = [(source, shapes, mode) for source, shapes in LINES for mode in ("train", "eval")
         if mode == "eval" or not source.startswith(RANDOM)]


@pytest.mark.parametrize("source, shapes, mode", CASES,
                         ids=[f"{source}-{mode}" for source, _, mode in CASES])
def test_module_matches_pytorch(source, shapes, mode) -> None:
    theirs, ours = _build(source)
    getattr(theirs, mode)()
    getattr(ours, mode)()
    _run(theirs, ours, _inputs(shapes))
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("source, shape", [
    ("Dropout1d(0.4)", (256, 64, 3)), ("Dropout2d(0.4)", (256, 64, 2, 2)),
    ("Dropout3d(0.4)", (256, 64, 1, 2, 2)), ("AlphaDropout(0.4)", (256, 64, 2)),
    ("FeatureAlphaDropout(0.4)", (256, 64, 2))])
def test_random_layers_drop_as_pytorch_s(source, shape) -> None:
    """Each output is x * s + o for (s, o) the kept or the dropped unit's pair, from the
    paper's formula; the same share dropped (0.4, within 5 standard deviations), and
    whole channels where PyTorch drops channels. Checked for both frameworks."""
    x = np.random.default_rng(1).uniform(0.5, 1.5, shape)
    if "Alpha" in source:
        low = -1.7580993408473766
        a = ((1 - 0.4) * (1 + 0.4 * low**2)) ** -0.5
        kept, dropped = (a, -a * low * 0.4), (0.0, a * low * 0.6)
    else:
        kept, dropped = (1 / 0.6, 0.0), (0.0, 0.0)
    theirs, ours = _build(source)
    for y in (theirs(torch.tensor(x)).numpy(), ours(lm.tensor(x)).numpy()):
        is_dropped = np.isclose(y, x * dropped[0] + dropped[1])
        assert np.all(is_dropped | np.isclose(y, x * kept[0] + kept[1]))
        assert abs(is_dropped.mean() - 0.4) < 5 * np.sqrt(0.24 / (256 * 64))
        if "1d" in source or "2d" in source or "3d" in source or "Feature" in source:
            per_channel = is_dropped.reshape(256, 64, -1)
            assert np.all(per_channel.all(-1) | ~per_channel.any(-1))


def test_embedding_max_norm_renormalises_as_pytorch() -> None:
    theirs, ours = _build("Embedding(7, 3, max_norm=1.0)")
    ids = _inputs(["ids"])[0]
    np.testing.assert_allclose(ours(lm.tensor(ids)).array, theirs(torch.tensor(ids)).detach()
                               .numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours.weight.array, theirs.weight.detach().numpy(), rtol=1e-10)


def test_ctc_loss_matches_pytorch() -> None:
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((9, 3, 5))
    targets = np.array([[1, 2, 2, 4], [3, 1, 0, 0], [4, 4, 1, 0]])
    lengths = ([9, 7, 8], [4, 2, 3])
    for reduction in ("mean", "sum", "none"):
        tl = torch.tensor(logits, requires_grad=True)
        ll = lm.tensor(logits, requires_grad=True)
        ty = torch.nn.CTCLoss(blank=0, reduction=reduction)(
            tl.log_softmax(2), torch.tensor(targets), *map(torch.tensor, lengths))
        ly = nn.CTCLoss(blank=0, reduction=reduction)(ll.log_softmax(2), targets, *lengths)
        ty.sum().backward()
        ly.sum().backward()
        np.testing.assert_allclose(ly.array, ty.detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(ll.grad.array, tl.grad.numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("source,shape", [
    ("MaxPool2d(3, 2, ceil_mode=True)", (2, 3, 7, 7)),
    ("MaxPool2d(2, 1, dilation=2)", (2, 3, 6, 6)),
    ("MaxPool2d(3, 2, 1, ceil_mode=True)", (2, 3, 7, 6)),
    ("MaxPool1d(3, 2, ceil_mode=True)", (2, 3, 9)),
    ("MaxPool3d(2)", (1, 2, 4, 4, 4)),
])
def test_max_pooling_sends_a_windows_gradient_where_pytorch_does(source, shape) -> None:
    """The composed max pooling (dilation, ceil_mode, 3-D) picks PyTorch's element: the
    first of tied maxima, and the last NaN in a window holding NaN."""
    theirs, ours = _build(source)
    x = np.random.default_rng(7).integers(0, 4, shape).astype(np.float64)  # many ties
    flat = x.reshape(-1)
    flat[[1, 5, 6, 30, 31, 40]] = np.nan
    tx, lx = torch.tensor(x, requires_grad=True), lm.tensor(x, requires_grad=True)
    ty, ly = theirs(tx), ours(lx)
    gy = np.random.default_rng(8).standard_normal(ty.shape)
    ty.backward(torch.tensor(gy))
    ly.backward(lm.tensor(gy))
    np.testing.assert_array_equal(ly.detach().numpy(), ty.detach().numpy())
    np.testing.assert_allclose(lx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_data_parallel_and_sync_batch_norm_wrap_as_pytorchs():
    source = "Sequential(Conv2d(3, 4, 3), BatchNorm2d(4), ReLU())"
    for lib in (torch, lm):
        model = eval(source, {"__builtins__": {}}, vars(lib.nn))  # noqa: S307
        wrapped = lib.nn.DataParallel(model)
        converted = lib.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        if lib is torch:
            want = (list(wrapped.state_dict()), type(converted[1]).__name__, repr(converted))
        else:
            got = (list(wrapped.state_dict()), type(converted[1]).__name__, repr(converted))
        assert wrapped.module is model
    assert got == want
    assert isinstance(nn.LSTM(2, 3), nn.RNNBase) and isinstance(nn.GRUCell(2, 3), nn.RNNCellBase)


def test_a_replaced_layer_keeps_its_place_as_in_pytorch():
    """setattr over an existing child (transfer learning's `model.fc = ...`, a Sequential's
    middle layer) keeps its position: Sequential runs it where the old one ran."""
    x = np.random.default_rng(0).standard_normal((2, 3))
    outs, orders = [], []
    for lib in (torch, lm):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        setattr(model, "1", lib.nn.Tanh())
        model = model.double() if lib is torch else model.to("float64")
        with lib.no_grad():
            for p in model.parameters():
                p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape))))
        outs.append(np.asarray(model(lib.tensor(x)).detach().numpy()))
        orders.append(([n for n, _ in model.named_children()], list(model.state_dict())))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)
    assert orders[1] == orders[0]


LAZY = [("LazyLinear(3)", (2, 5)), ("LazyLinear(3, bias=False)", (2, 4, 5)),
        ("LazyConv1d(4, 3, padding=1)", (2, 3, 6)), ("LazyConv2d(4, 3, stride=2)", (2, 3, 7, 7)),
        ("LazyConv3d(2, 1)", (1, 3, 2, 3, 2)), ("LazyConvTranspose1d(2, 3)", (2, 3, 5)),
        ("LazyConvTranspose2d(2, 3, stride=2)", (1, 3, 4, 4)),
        ("LazyConvTranspose3d(2, 2, stride=2)", (1, 3, 2, 3, 2)), ("LazyBatchNorm1d()", (4, 3)),
        ("LazyBatchNorm2d(momentum=0.3)", (4, 3, 2, 2)), ("LazyBatchNorm3d()", (2, 3, 2, 2, 2)),
        ("LazyInstanceNorm1d(affine=True)", (2, 3, 5)), ("LazyInstanceNorm2d()", (2, 3, 4, 4)),
        ("LazyInstanceNorm3d(track_running_stats=True)", (2, 3, 2, 2, 2))]


@pytest.mark.parametrize("source, shape", LAZY, ids=[s for s, _ in LAZY])
def test_a_lazy_module_becomes_pytorchs_layer(source, shape):
    """Both take their sizes from a first input, become the same layer (class, repr,
    state dict), and with torch's values loaded, give its outputs and gradients."""
    x = np.random.default_rng(0).standard_normal(shape)
    theirs = eval(source, {"__builtins__": {}}, vars(torch.nn)).double()  # noqa: S307
    ours = eval(source, {"__builtins__": {}}, vars(nn)).to("float64")  # noqa: S307
    assert ours.has_uninitialized_params()
    theirs(torch.tensor(x))
    ours(lm.tensor(x))
    assert type(ours).__name__ == type(theirs).__name__ and repr(ours) == repr(theirs)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(state)
    fresh = eval(source, {"__builtins__": {}}, vars(nn)).to("float64")  # noqa: S307
    fresh.load_state_dict(state)  # sized by the state dict, as PyTorch's load does
    for layer in (ours, fresh):
        layer.load_state_dict(state)
        theirs.zero_grad()
        _run(theirs, layer, [x])
