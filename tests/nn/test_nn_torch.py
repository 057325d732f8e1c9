"""Layers against PyTorch with the same weights copied by name: outputs and gradients to 1e-5.

Loading torch's state_dict into the lamina layer also checks names and layouts.
Skipped where PyTorch is absent; CI installs torch==2.13.0.
"""

from __future__ import annotations

import numpy as np
import pytest
from layer_cases import flat_outputs

import lamina as lm
import lamina.nn as nn

torch = pytest.importorskip("torch")
tnn = torch.nn
pytestmark = pytest.mark.torch

PAIRS = {
    "linear": (lambda: nn.Linear(5, 3), lambda: tnn.Linear(5, 3), (4, 5)),
    "conv1d": (lambda: nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2),
               lambda: tnn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2), (2, 4, 11)),
    "conv2d": (lambda: nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
               lambda: tnn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
               (2, 4, 9, 8)),
    "conv2d_plain": (lambda: nn.Conv2d(3, 5, 3), lambda: tnn.Conv2d(3, 5, 3), (2, 3, 6, 6)),
    "conv_transpose1d": (
        lambda: nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
        lambda: tnn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
        (2, 4, 7)),
    "conv_transpose2d": (
        lambda: nn.ConvTranspose2d(3, 5, (3, 2), stride=(2, 3), padding=(1, 0),
                                   output_padding=(1, 2), dilation=(1, 2)),
        lambda: tnn.ConvTranspose2d(3, 5, (3, 2), stride=(2, 3), padding=(1, 0),
                                    output_padding=(1, 2), dilation=(1, 2)), (2, 3, 4, 5)),
    "maxpool1d": (lambda: nn.MaxPool1d(3, 2, 1), lambda: tnn.MaxPool1d(3, 2, 1), (2, 3, 9)),
    "maxpool2d": (lambda: nn.MaxPool2d(2), lambda: tnn.MaxPool2d(2), (2, 3, 6, 7)),
    "avgpool1d": (lambda: nn.AvgPool1d(2, 1), lambda: tnn.AvgPool1d(2, 1), (2, 3, 5)),
    "avgpool2d": (lambda: nn.AvgPool2d(3, 2, 1), lambda: tnn.AvgPool2d(3, 2, 1), (2, 3, 7, 6)),
    "adaptive_avgpool1d": (lambda: nn.AdaptiveAvgPool1d(4), lambda: tnn.AdaptiveAvgPool1d(4),
                           (2, 3, 10)),
    "adaptive_avgpool2d": (lambda: nn.AdaptiveAvgPool2d((3, None)),
                           lambda: tnn.AdaptiveAvgPool2d((3, None)), (2, 3, 7, 5)),
    "adaptive_avgpool2d_global": (lambda: nn.AdaptiveAvgPool2d(1),
                                  lambda: tnn.AdaptiveAvgPool2d(1), (2, 3, 6, 4)),
    "upsample_nearest": (lambda: nn.Upsample(size=(5, 7)), lambda: tnn.Upsample(size=(5, 7)),
                         (2, 3, 3, 4)),
    "upsample_bilinear": (lambda: nn.Upsample(scale_factor=(1.5, 2), mode="bilinear",
                                              align_corners=True),
                          lambda: tnn.Upsample(scale_factor=(1.5, 2), mode="bilinear",
                                               align_corners=True), (2, 3, 4, 3)),
    "upsample_linear": (lambda: nn.Upsample(scale_factor=2.5, mode="linear"),
                        lambda: tnn.Upsample(scale_factor=2.5, mode="linear"), (2, 3, 5)),
    "groupnorm": (lambda: nn.GroupNorm(3, 6, eps=1e-3),
                  lambda: _jittered(tnn.GroupNorm(3, 6, eps=1e-3)), (2, 6, 4, 3)),
    "groupnorm_plain_1d": (lambda: nn.GroupNorm(2, 4, affine=False),
                           lambda: tnn.GroupNorm(2, 4, affine=False), (3, 4, 5)),
    "elu": (lambda: nn.ELU(0.5), lambda: tnn.ELU(0.5), (3, 7)),
    "silu": (lambda: nn.SiLU(), lambda: tnn.SiLU(), (3, 7)),
    "softplus": (lambda: nn.Softplus(beta=2.0), lambda: tnn.Softplus(beta=2.0), (3, 7)),
    "embedding": (lambda: nn.Embedding(7, 4), lambda: tnn.Embedding(7, 4), None),
    "rnn": (lambda: nn.RNN(3, 5, num_layers=2, batch_first=True), lambda: tnn.RNN(3, 5, 2, batch_first=True),
            (2, 6, 3)),
    "rnn_relu_time_major": (lambda: nn.RNN(3, 5, nonlinearity="relu", batch_first=False),
                            lambda: tnn.RNN(3, 5, nonlinearity="relu"), (6, 2, 3)),
    "lstm": (lambda: nn.LSTM(3, 5, num_layers=2, batch_first=True), lambda: tnn.LSTM(3, 5, 2, batch_first=True),
             (2, 6, 3)),
    "gru": (lambda: nn.GRU(3, 5, num_layers=2, batch_first=True), lambda: tnn.GRU(3, 5, 2, batch_first=True),
            (2, 6, 3)),
    "layernorm": (lambda: nn.LayerNorm([4, 5], eps=1e-3),
                  lambda: _jittered(tnn.LayerNorm([4, 5], eps=1e-3)), (3, 2, 4, 5)),
    "layernorm_plain": (lambda: nn.LayerNorm(6, elementwise_affine=False),
                        lambda: tnn.LayerNorm(6, elementwise_affine=False), (4, 6)),
    "residual": (lambda: nn.Residual(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(4, 4, 3, padding=1), shortcut=nn.Conv2d(3, 4, 1)),
                 lambda: _TorchResidual(), (2, 3, 5, 5)),
    "attention": (lambda: nn.SelfAttention(8, 2, batch_first=True), lambda: _TorchSelfAttention(8, 2),
                  (3, 5, 8)),
    "attention_causal_time_major": (
        lambda: nn.SelfAttention(6, 3, causal=True, batch_first=False),
        lambda: _TorchSelfAttention(6, 3, causal=True, batch_first=False), (4, 2, 6)),
    "encoder_layer": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True),
                      lambda: _jittered(tnn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                                                    batch_first=True)),
                      (3, 5, 8)),
    "encoder_layer_prenorm_gelu_causal": (
        lambda: nn.TransformerEncoderLayer(8, 4, 12, dropout=0.0, activation="gelu",
                                           norm_first=True, causal=True, batch_first=False),
        lambda: _TorchCausalEncoder(8, 4, 12), (5, 2, 8)),
}


class _TorchCausalEncoder(tnn.TransformerEncoderLayer):
    """torch's encoder layer, pre-norm with GELU, time-major, given the causal mask."""

    def __init__(self, d_model, nhead, dim_feedforward):
        super().__init__(d_model, nhead, dim_feedforward, dropout=0.0, activation="gelu",
                         norm_first=True)
        _jittered(self)

    def forward(self, x):
        mask = tnn.Transformer.generate_square_subsequent_mask(x.shape[0])
        return super().forward(x, src_mask=mask, is_causal=True)


class _TorchSelfAttention(tnn.MultiheadAttention):
    """torch's MultiheadAttention called on one input, as lamina's is in a Sequential."""

    def __init__(self, embed_dim, num_heads, causal=False, batch_first=True):
        super().__init__(embed_dim, num_heads, batch_first=batch_first)
        self.causal = causal
        with torch.no_grad():  # torch starts both biases at zero
            self.in_proj_bias.normal_()
            self.out_proj.bias.normal_()

    def forward(self, x):
        length = x.shape[1 if self.batch_first else 0]
        mask = tnn.Transformer.generate_square_subsequent_mask(length) if self.causal else None
        return super().forward(x, x, x, need_weights=False, attn_mask=mask,
                               is_causal=self.causal)[0]


def _jittered(module):
    """Non-trivial affine weights (PyTorch starts them at ones and zeros)."""
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.randn_like(p) * 0.5)
    return module


class _TorchResidual(tnn.Module):
    """The residual block one writes by hand in PyTorch; its names are lamina's."""

    def __init__(self):
        super().__init__()
        for name, m in [("0", tnn.Conv2d(3, 4, 3, padding=1)), ("1", tnn.ReLU()),
                        ("2", tnn.Conv2d(4, 4, 3, padding=1)), ("shortcut", tnn.Conv2d(3, 4, 1))]:
            self.add_module(name, m)

    def forward(self, x):
        body = self._modules
        return body["2"](body["1"](body["0"](x))) + self.shortcut(x)


def _copy_weights(ours, theirs):
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})


def _initial_state(name, batch):
    rng = np.random.default_rng(7)
    h = rng.standard_normal((2 if name in ("rnn", "lstm", "gru") else 1, batch, 5)).astype(np.float32)
    if name == "lstm":
        return h, rng.standard_normal(h.shape).astype(np.float32)
    return h


def _compare(a, b, tol=1e-5):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, float(np.abs(b).max(initial=0))))


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_layer_matches_pytorch(name) -> None:
    torch.manual_seed(0)
    make_ours, make_theirs, shape = PAIRS[name]
    ours, theirs = make_ours(), make_theirs()
    _copy_weights(ours, theirs)
    rng = np.random.default_rng(0)
    if shape is None:
        x = rng.integers(0, 7, (3, 4))
        lx, tx = lm.tensor(x), torch.tensor(x)
    else:
        x = rng.standard_normal(shape).astype(np.float32)
        lx, tx = lm.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    args_l, args_t = [lx], [tx]
    recurrent = isinstance(ours, (nn.RNN, nn.LSTM, nn.GRU))
    if recurrent:
        batch = x.shape[0] if ours.batch_first else x.shape[1]
        state = _initial_state(name, batch)
        if isinstance(state, tuple):
            args_l.append(tuple(lm.tensor(s, requires_grad=True) for s in state))
            args_t.append(tuple(torch.tensor(s, requires_grad=True) for s in state))
        else:
            args_l.append(lm.tensor(state, requires_grad=True))
            args_t.append(torch.tensor(state, requires_grad=True))
    ly, ty = flat_outputs(ours(*args_l)), flat_outputs(theirs(*args_t))
    assert len(ly) == len(ty)
    weights = [rng.standard_normal(t.shape).astype(np.float32) for t in ty]
    sum((y * lm.tensor(w)).sum() for y, w in zip(ly, weights)).backward()
    sum((y * torch.tensor(w)).sum() for y, w in zip(ty, weights)).backward()
    for a, b in zip(ly, ty):
        _compare(a.array, b.detach().numpy())
    if shape is not None:
        _compare(lx.grad, tx.grad.numpy())
    for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == tn
        _compare(p.grad, tp.grad.numpy())
    if recurrent:
        for a, b in zip(flat_outputs(args_l[1]), flat_outputs(args_t[1])):
            _compare(a.grad, b.grad.numpy())


@pytest.mark.parametrize("kind, shape", [("1d", (6, 3)), ("1d", (4, 3, 5)), ("2d", (4, 3, 5, 5)),
                                         ("2d", (1, 3, 5, 5))])  # one image: channel rows
def test_batch_norm_train_and_eval_match_pytorch(kind, shape) -> None:
    torch.manual_seed(0)
    ours = getattr(nn, f"BatchNorm{kind}")(3, momentum=0.2)
    theirs = getattr(tnn, f"BatchNorm{kind}")(3, momentum=0.2)
    with torch.no_grad():
        theirs.weight.uniform_(0.5, 1.5)
        theirs.bias.uniform_(-0.5, 0.5)
    _copy_weights(ours, theirs)
    rng = np.random.default_rng(0)
    for _ in range(4):  # several training steps move the running statistics
        x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
        lx, tx = lm.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        ly, ty = ours(lx), theirs(tx)
        w = rng.standard_normal(shape).astype(np.float32)
        (ly * lm.tensor(w)).sum().backward()
        (ty * torch.tensor(w)).sum().backward()
        _compare(ly.array, ty.detach().numpy())
        _compare(lx.grad, tx.grad.numpy())
        _compare(ours.weight.grad, theirs.weight.grad.numpy())
        _compare(ours.bias.grad, theirs.bias.grad.numpy())
        ours.zero_grad()
        theirs.zero_grad()
    _compare(ours.running_mean.array, theirs.running_mean.numpy())
    _compare(ours.running_var.array, theirs.running_var.numpy())
    assert int(ours.num_batches_tracked.array) == int(theirs.num_batches_tracked) == 4
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    lx, tx = lm.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ly, ty = ours(lx), theirs(tx)
    ly.sum().backward()
    ty.sum().backward()
    _compare(ly.array, ty.detach().numpy())
    _compare(lx.grad, tx.grad.numpy())


def test_sequential_state_dict_names_match_pytorch() -> None:
    ours = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                         nn.Linear(16, 2))
    theirs = tnn.Sequential(tnn.Conv2d(1, 4, 3), tnn.BatchNorm2d(4), tnn.ReLU(), tnn.Flatten(),
                            tnn.Linear(16, 2))
    assert set(ours.state_dict()) == set(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        assert ours.state_dict()[k].shape == tuple(v.shape), k


def test_layer_list_state_dict_names_match_pytorch_module_list() -> None:
    class Ours(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.LayerList([nn.Linear(3, 3), nn.LayerNorm(3)])

    class Theirs(tnn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = tnn.ModuleList([tnn.Linear(3, 3), tnn.LayerNorm(3)])

    theirs = Theirs().state_dict()
    assert list(Ours().state_dict()) == list(theirs)
    Ours().load_state_dict({k: v.numpy() for k, v in theirs.items()})
