"""Modules print as PyTorch's: the same constructor call gives the same `repr` (with
`torch` read as `lamina`), arguments, children, parameters and all."""

from __future__ import annotations

import warnings

import pytest

import lamina as lm

torch = pytest.importorskip("torch")

CALLS = [
    'Linear(3, 4)',
    'Linear(3, 4, bias=False)',
    'Conv1d(2, 4, 3, stride=2, padding=1)',
    'Conv2d(3, 16, kernel_size=3, stride=2, padding=1, bias=False)',
    "Conv2d(3, 16, 3, padding='same', dilation=2, groups=1, padding_mode='reflect')",
    'ConvTranspose2d(8, 4, 2, stride=2)',
    'MaxPool2d(2)',
    'MaxPool2d(3, stride=2, padding=1)',
    'AvgPool2d(2, ceil_mode=True)',
    'AdaptiveAvgPool2d((1, 1))',
    'AdaptiveAvgPool2d(1)',
    'BatchNorm2d(16)',
    'BatchNorm1d(8, momentum=0.01, affine=False)',
    'LayerNorm(8)',
    'LayerNorm([4, 8], eps=1e-6, elementwise_affine=False)',
    'GroupNorm(2, 8)',
    'InstanceNorm2d(3)',
    'Dropout(0.1)',
    'Dropout2d()',
    'Embedding(100, 16, padding_idx=0)',
    "EmbeddingBag(10, 3, mode='sum')",
    'LSTM(10, 20, num_layers=2, batch_first=True, dropout=0.1, bidirectional=True)',
    'GRU(4, 8)',
    "RNN(4, 8, nonlinearity='relu')",
    'LSTMCell(4, 8)',
    'ReLU()',
    'ReLU(inplace=True)',
    'LeakyReLU(0.2)',
    'GELU()',
    "GELU(approximate='tanh')",
    'SiLU()',
    'Softmax(dim=-1)',
    'LogSoftmax(dim=1)',
    'Tanh()',
    'Sigmoid()',
    'ELU(alpha=0.5)',
    'Hardtanh(-2, 2)',
    'PReLU()',
    'Softplus(beta=2)',
    'Identity()',
    'Flatten()',
    'Unflatten(1, (2, 3))',
    "Upsample(scale_factor=2, mode='nearest')",
    "Upsample(size=(4, 4), mode='bilinear', align_corners=False)",
    'PixelShuffle(2)',
    'ZeroPad2d(1)',
    'ConstantPad1d(2, 3.5)',
    'ReflectionPad2d((1, 1, 2, 0))',
    'MultiheadAttention(8, 2, dropout=0.1, batch_first=True)',
    'TransformerEncoderLayer(16, 2, dim_feedforward=32)',
    'Bilinear(2, 3, 4)',
    'CosineSimilarity(dim=1)',
    'PairwiseDistance(p=1.0)',
    'Sequential(Linear(2, 2), ReLU())',
    'ModuleList([Linear(2, 2), ReLU()])',
    "ModuleDict({'a': Linear(2, 2)})",
    'ParameterList([Parameter(randn(2))])',
    'Fold(output_size=(4, 4), kernel_size=2)',
    'Unfold(kernel_size=2)',
    'ChannelShuffle(2)',
    'Mish()',
    'Hardswish()',
    'Threshold(0.1, 20)',
    'Softmax2d()',
    'CELU()',
    'RMSNorm(8)',
    'AlphaDropout(0.2)',
    'LocalResponseNorm(2)',
    'LPPool2d(2, 3)',
]


@pytest.mark.parametrize("call", CALLS)
def test_a_module_prints_as_pytorchs(call):
    printed = []
    for lib in (torch, lm):
        names = {**vars(lib.nn), "randn": lib.randn, "Parameter": lib.nn.Parameter}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = eval(call, {"__builtins__": {}}, names)  # noqa: S307
        printed.append(repr(module).replace("torch.", "lamina."))
    assert printed[0] == printed[1]
