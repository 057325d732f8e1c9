"""Layers, built from configs and written back to them. Import as `import lamina.nn as nn`."""

from lamina.nn import functional, init, utils
from lamina.nn.activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from lamina.nn.attention import MultiheadAttention, PositionalEncoding, TransformerEncoderLayer
from lamina.nn.container import Concat, Identity, LayerList, ModuleList, Residual, Sequential
from lamina.nn.conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from lamina.nn.dropout import Dropout
from lamina.nn.embedding import Embedding
from lamina.nn.flatten import Flatten
from lamina.nn.layer import Layer, Module, Parameter
from lamina.nn.linear import Linear
from lamina.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CosineEmbeddingLoss,
    CrossEntropyLoss,
    GaussianNLLLoss,
    HingeEmbeddingLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    MultiLabelSoftMarginLoss,
    NLLLoss,
    PoissonNLLLoss,
    SmoothL1Loss,
    SoftMarginLoss,
    TripletMarginLoss,
)
from lamina.nn.normalization import (
    BatchNorm1d,
    BatchNorm2d,
    GroupNorm,
    LayerNorm,
    Standardize,
)
from lamina.nn.pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
    Upsample,
)
from lamina.nn.rbm import RBM
from lamina.nn.recurrent import GRU, LSTM, RNN
from lamina.nn.registry import ConfigError, from_config, layer_types, register_layer

__all__ = [
    "CELU", "GLU", "Hardsigmoid", "Hardswish", "Hardtanh", "LogSigmoid", "LogSoftmax",
    "Mish", "PReLU", "ReLU6", "SELU", "Softmin", "Softsign", "Tanhshrink", "Threshold",
    "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
    "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss",
    "MarginRankingLoss", "MultiLabelSoftMarginLoss", "NLLLoss", "PoissonNLLLoss",
    "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
    "functional",
    "utils",
    "ELU", "GELU", "GRU", "LSTM", "RBM", "RNN", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AvgPool1d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Concat", "ConfigError", "Conv1d",
    "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "Dropout", "Embedding", "Flatten",
    "GroupNorm", "Identity", "Layer", "LayerList", "LayerNorm", "Module", "ModuleList",
    "LeakyReLU", "Linear",
    "MaxPool1d", "MaxPool2d", "MultiheadAttention", "Parameter", "PositionalEncoding", "ReLU",
    "Residual", "Sequential", "SiLU", "Sigmoid", "Softmax", "Softplus", "Standardize", "Tanh",
    "TransformerEncoderLayer", "Upsample", "from_config", "init", "layer_types", "register_layer",
]
