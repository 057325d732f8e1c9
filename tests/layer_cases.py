"""One small instance of every registered layer with an input generator."""

from __future__ import annotations

import numpy as np


def _f(*shape):
    return lambda rng: rng.standard_normal(shape).astype(np.float32)


def _binary(*shape):
    return lambda rng: (rng.random(shape) < 0.5).astype(np.float32)


def _pair(make_input, make_target):
    return lambda rng: (make_input(rng), make_target(rng))


def _labels(n, c):
    return lambda rng: rng.integers(0, c, n)


def _unit(*shape):
    return lambda rng: rng.uniform(0.1, 0.9, shape).astype(np.float32)


def _signs(*shape):
    return lambda rng: np.where(rng.random(shape) < 0.5, 1.0, -1.0).astype(np.float32)


def _pooled_with_indices(*shape):
    """(values, indices): what max pooling with 2-wide windows gives MaxUnpool, each index
    one of its window's places in the unpooled planes (twice the size along each axis)."""
    def make(rng):
        spatial = shape[2:]
        pick = [2 * np.arange(n).reshape([-1 if a == d else 1 for a in range(len(spatial))])
                + rng.integers(0, 2, (*shape[:2], *spatial)) for d, n in enumerate(spatial)]
        flat = np.zeros(shape, np.int64)
        for d, coord in enumerate(pick):
            flat = flat * (2 * spatial[d]) + coord
        return _f(*shape)(rng), flat
    return make


LOSS_CASES = {
    "CrossEntropyLoss": ({"type": "CrossEntropyLoss", "weight": [1.0, 2.0, 0.5],
                          "label_smoothing": 0.1}, _pair(_f(4, 3), _labels(4, 3))),
    "AdaptiveLogSoftmaxWithLoss": ({"type": "AdaptiveLogSoftmaxWithLoss", "in_features": 8,
                                    "n_classes": 10, "cutoffs": [3, 6], "div_value": 2.0,
                                    "head_bias": True}, _pair(_f(4, 8), _labels(4, 10))),
    "LinearCrossEntropyLoss": ({"type": "LinearCrossEntropyLoss", "in_features": 4,
                                "num_classes": 3, "bias": True},
                               _pair(_f(2, 4), _labels(2, 3))),
    "NLLLoss": ({"type": "NLLLoss", "ignore_index": 1}, _pair(_f(4, 3), _labels(4, 3))),
    "MSELoss": ({"type": "MSELoss", "reduction": "sum"}, _pair(_f(3, 2), _f(3, 2))),
    "L1Loss": ({"type": "L1Loss"}, _pair(_f(3, 2), _f(3, 2))),
    "SmoothL1Loss": ({"type": "SmoothL1Loss", "beta": 0.5}, _pair(_f(3, 2), _f(3, 2))),
    "HuberLoss": ({"type": "HuberLoss", "delta": 0.5}, _pair(_f(3, 2), _f(3, 2))),
    "BCELoss": ({"type": "BCELoss"}, _pair(_unit(3, 2), _unit(3, 2))),
    "BCEWithLogitsLoss": ({"type": "BCEWithLogitsLoss", "pos_weight": [2.0, 0.5]},
                          _pair(_f(3, 2), _unit(3, 2))),
    "KLDivLoss": ({"type": "KLDivLoss", "reduction": "batchmean"}, _pair(_f(3, 2), _unit(3, 2))),
    "SoftMarginLoss": ({"type": "SoftMarginLoss"}, _pair(_f(3, 2), _signs(3, 2))),
    "PoissonNLLLoss": ({"type": "PoissonNLLLoss"}, _pair(_f(3, 2), _unit(3, 2))),
    "GaussianNLLLoss": ({"type": "GaussianNLLLoss"},
                        lambda rng: (_f(3, 2)(rng), _f(3, 2)(rng), _unit(3, 2)(rng))),
    "CosineEmbeddingLoss": ({"type": "CosineEmbeddingLoss", "margin": 0.1},
                            lambda rng: (_f(3, 4)(rng), _f(3, 4)(rng), _signs(3)(rng))),
    "MarginRankingLoss": ({"type": "MarginRankingLoss", "margin": 0.3},
                          lambda rng: (_f(5)(rng), _f(5)(rng), _signs(5)(rng))),
    "HingeEmbeddingLoss": ({"type": "HingeEmbeddingLoss"}, _pair(_f(5), _signs(5))),
    "TripletMarginLoss": ({"type": "TripletMarginLoss", "margin": 2.0},
                          lambda rng: (_f(3, 4)(rng), _f(3, 4)(rng), _f(3, 4)(rng))),
    "MultiLabelSoftMarginLoss": ({"type": "MultiLabelSoftMarginLoss"},
                                 _pair(_f(3, 4), _binary(3, 4))),
    "MultiMarginLoss": ({"type": "MultiMarginLoss", "p": 2, "margin": 0.5,
                         "weight": [1.0, 2.0, 0.5, 1.0]}, _pair(_f(3, 4), _labels(3, 4))),
    "MultiLabelMarginLoss": ({"type": "MultiLabelMarginLoss"},
                             _pair(_f(2, 4), lambda rng: np.array([[3, 0, -1, 1],
                                                                  [2, -1, 0, 0]]))),
    "TripletMarginWithDistanceLoss": ({"type": "TripletMarginWithDistanceLoss", "margin": 0.5,
                                       "swap": True},
                                      lambda rng: (_f(3, 4)(rng), _f(3, 4)(rng), _f(3, 4)(rng))),
    # log-probabilities (T, N, C) made from the scores by log_softmax: see LOG_PROB_INPUTS
    "CTCLoss": ({"type": "CTCLoss", "blank": 0},
                lambda rng: (_f(6, 2, 4)(rng), np.array([[1, 2, 2], [3, 1, 0]]),
                             np.array([6, 5]), np.array([3, 2]))),
}

# Losses whose first input is log-probabilities, and whose gradient is PyTorch's: exact
# only through a log_softmax, so the gradient checks put one in front.
LOG_PROB_INPUTS = {"CTCLoss"}
# Layers whose gradient is PyTorch's, which is not the derivative of their forward (the
# legacy CrossMapLRN2d's backward): checked against PyTorch instead of by differences.
NOT_DERIVATIVES = {"CrossMapLRN2d"}

# Layers that take more than one input (PyTorch's attention and decoders)
MULTI_INPUT_CASES = {
    **{f"MaxUnpool{nd}d": ({"type": f"MaxUnpool{nd}d", "kernel_size": 2},
                           _pooled_with_indices(2, 3, *(3,) * nd))
       for nd in (1, 2, 3)},
    "MultiheadAttention": ({"type": "MultiheadAttention", "embed_dim": 4, "num_heads": 2,
                            "kdim": 3, "vdim": 5, "dropout": 0.3, "add_bias_kv": True,
                            "add_zero_attn": True},
                           lambda rng: (_f(3, 2, 4)(rng), _f(5, 2, 3)(rng), _f(5, 2, 5)(rng))),
    "TransformerDecoderLayer": ({"type": "TransformerDecoderLayer", "d_model": 4, "nhead": 2,
                                 "dim_feedforward": 6, "dropout": 0.2, "batch_first": True},
                                lambda rng: (_f(2, 3, 4)(rng), _f(2, 5, 4)(rng))),
    "TransformerDecoder": ({"type": "TransformerDecoder", "num_layers": 2, "norm": None,
                            "decoder_layer": {"type": "TransformerDecoderLayer", "d_model": 4,
                                              "nhead": 1, "dim_feedforward": 3,
                                              "norm_first": True, "activation": "gelu"}},
                           lambda rng: (_f(3, 2, 4)(rng), _f(4, 2, 4)(rng))),
    "Bilinear": ({"type": "Bilinear", "in1_features": 3, "in2_features": 2, "out_features": 4},
                 lambda rng: (_f(5, 3)(rng), _f(5, 2)(rng))),
    "CosineSimilarity": ({"type": "CosineSimilarity", "dim": 1},
                         lambda rng: (_f(4, 3)(rng), _f(4, 3)(rng))),
    "PairwiseDistance": ({"type": "PairwiseDistance", "p": 1.5, "keepdim": True},
                         lambda rng: (_f(4, 3)(rng), _f(4, 3)(rng))),
    "Transformer": ({"type": "Transformer", "d_model": 4, "nhead": 2, "num_encoder_layers": 1,
                     "num_decoder_layers": 2, "dim_feedforward": 5, "dropout": 0.1},
                    lambda rng: (_f(5, 2, 4)(rng), _f(3, 2, 4)(rng))),
}

LAYER_CASES = {
    **LOSS_CASES,
    **MULTI_INPUT_CASES,
    "TransformerEncoder": ({"type": "TransformerEncoder", "num_layers": 2,
                            "encoder_layer": {"type": "TransformerEncoderLayer", "d_model": 4,
                                              "nhead": 2, "dim_feedforward": 6,
                                              "batch_first": True},
                            "norm": {"type": "LayerNorm", "normalized_shape": 4}}, _f(2, 3, 4)),
    "Linear": ({"type": "Linear", "in_features": 4, "out_features": 3}, _f(2, 4)),
    "NonDynamicallyQuantizableLinear": ({"type": "NonDynamicallyQuantizableLinear",
                                         "in_features": 4, "out_features": 3}, _f(2, 4)),
    "Conv1d": ({"type": "Conv1d", "in_channels": 2, "out_channels": 4, "kernel_size": 3,
                "stride": 2, "padding": 1, "dilation": 1, "groups": 2}, _f(2, 2, 7)),
    "Conv2d": ({"type": "Conv2d", "in_channels": 2, "out_channels": 3, "kernel_size": [2, 3],
                "padding": "same"}, _f(2, 2, 5, 4)),
    "ConvTranspose1d": ({"type": "ConvTranspose1d", "in_channels": 2, "out_channels": 4,
                         "kernel_size": 3, "stride": 2, "padding": 1, "output_padding": 1,
                         "groups": 2}, _f(2, 2, 5)),
    "ConvTranspose2d": ({"type": "ConvTranspose2d", "in_channels": 3, "out_channels": 2,
                         "kernel_size": [2, 3], "stride": [2, 1], "padding": [0, 1],
                         "dilation": [1, 2]}, _f(2, 3, 3, 4)),
    "MaxPool1d": ({"type": "MaxPool1d", "kernel_size": 2, "ceil_mode": True}, _f(2, 3, 7)),
    "MaxPool2d": ({"type": "MaxPool2d", "kernel_size": 3, "stride": 2, "padding": 1},
                  _f(2, 2, 5, 5)),
    "AvgPool1d": ({"type": "AvgPool1d", "kernel_size": 3, "stride": 1, "padding": 1},
                  _f(2, 3, 6)),
    "AvgPool2d": ({"type": "AvgPool2d", "kernel_size": 3, "stride": 2, "padding": 1,
                   "ceil_mode": True, "count_include_pad": False}, _f(2, 2, 4, 6)),
    "AdaptiveAvgPool1d": ({"type": "AdaptiveAvgPool1d", "output_size": 1}, _f(2, 3, 7)),
    "AdaptiveAvgPool2d": ({"type": "AdaptiveAvgPool2d", "output_size": [1, 1]}, _f(2, 3, 5, 4)),
    "Upsample": ({"type": "Upsample", "scale_factor": 2, "mode": "bilinear"}, _f(2, 3, 3, 4)),
    "GroupNorm": ({"type": "GroupNorm", "num_groups": 2, "num_channels": 4, "eps": 1e-4},
                  _f(3, 4, 3, 2)),
    "ELU": ({"type": "ELU", "alpha": 0.7}, _f(3, 4)),
    "SiLU": ({"type": "SiLU"}, _f(3, 4)),
    "Softplus": ({"type": "Softplus", "beta": 2.0}, _f(3, 4)),
    "BatchNorm1d": ({"type": "BatchNorm1d", "num_features": 3}, _f(4, 3, 5)),
    "BatchNorm2d": ({"type": "BatchNorm2d", "num_features": 2}, _f(3, 2, 3, 3)),
    "BatchNorm3d": ({"type": "BatchNorm3d", "num_features": 2}, _f(3, 2, 2, 3, 3)),
    "RMSNorm": ({"type": "RMSNorm", "normalized_shape": [3, 4], "eps": 1e-4}, _f(2, 5, 3, 4)),
    "Hardshrink": ({"type": "Hardshrink", "lambd": 0.3}, _f(3, 4)),
    "Softshrink": ({"type": "Softshrink", "lambd": 0.3}, _f(3, 4)),
    "RReLU": ({"type": "RReLU", "lower": 0.1, "upper": 0.2}, _f(3, 4)),
    "Softmax2d": ({"type": "Softmax2d"}, _f(2, 3, 2, 2)),
    "UpsamplingNearest2d": ({"type": "UpsamplingNearest2d", "scale_factor": 2},
                            _f(1, 2, 3, 3)),
    "UpsamplingBilinear2d": ({"type": "UpsamplingBilinear2d", "size": [4, 5]},
                             _f(1, 2, 3, 3)),
    "Dropout": ({"type": "Dropout", "p": 0.3}, _f(4, 5)),
    "Dropout1d": ({"type": "Dropout1d", "p": 0.4}, _f(3, 4, 5)),
    "Dropout2d": ({"type": "Dropout2d", "p": 0.4}, _f(3, 4, 2, 2)),
    "Dropout3d": ({"type": "Dropout3d", "p": 0.4}, _f(2, 3, 2, 2, 2)),
    "AlphaDropout": ({"type": "AlphaDropout", "p": 0.2}, _f(4, 5)),
    "FeatureAlphaDropout": ({"type": "FeatureAlphaDropout", "p": 0.2}, _f(3, 4, 5)),
    "Unflatten": ({"type": "Unflatten", "dim": 1, "unflattened_size": [2, 3]}, _f(4, 6)),
    "PixelShuffle": ({"type": "PixelShuffle", "upscale_factor": 2}, _f(2, 8, 2, 3)),
    "PixelUnshuffle": ({"type": "PixelUnshuffle", "downscale_factor": 2}, _f(2, 2, 4, 6)),
    "Unfold": ({"type": "Unfold", "kernel_size": [2, 3], "padding": 1, "stride": [1, 2]},
               _f(2, 2, 4, 5)),
    "Fold": ({"type": "Fold", "output_size": [3, 4], "kernel_size": 2}, _f(2, 8, 6)),
    "InstanceNorm1d": ({"type": "InstanceNorm1d", "num_features": 3, "affine": True,
                        "track_running_stats": True}, _f(2, 3, 6)),
    "InstanceNorm2d": ({"type": "InstanceNorm2d", "num_features": 2}, _f(2, 2, 3, 4)),
    "InstanceNorm3d": ({"type": "InstanceNorm3d", "num_features": 2, "affine": True},
                       _f(2, 2, 2, 3, 2)),
    "LocalResponseNorm": ({"type": "LocalResponseNorm", "size": 3, "alpha": 0.1},
                          _f(2, 5, 3, 3)),
    "Conv3d": ({"type": "Conv3d", "in_channels": 2, "out_channels": 4, "kernel_size": [2, 3, 2],
                "padding": 1, "groups": 2}, _f(2, 2, 3, 4, 3)),
    "MaxPool3d": ({"type": "MaxPool3d", "kernel_size": 2, "padding": 1, "dilation": [1, 2, 1]},
                  _f(2, 2, 3, 4, 3)),
    "AvgPool3d": ({"type": "AvgPool3d", "kernel_size": 2, "stride": 1}, _f(2, 2, 3, 4, 3)),
    "AdaptiveMaxPool1d": ({"type": "AdaptiveMaxPool1d", "output_size": 3}, _f(2, 3, 7)),
    "AdaptiveAvgPool3d": ({"type": "AdaptiveAvgPool3d", "output_size": [2, None, 3]},
                          _f(2, 2, 4, 3, 6)),
    "AdaptiveMaxPool3d": ({"type": "AdaptiveMaxPool3d", "output_size": [1, 2, 3]},
                          _f(2, 2, 3, 4, 5)),
    "LPPool1d": ({"type": "LPPool1d", "norm_type": 2, "kernel_size": 2}, _f(2, 3, 6)),
    "LPPool2d": ({"type": "LPPool2d", "norm_type": 2, "kernel_size": [2, 3], "stride": 1},
                 _f(2, 3, 4, 5)),
    "LPPool3d": ({"type": "LPPool3d", "norm_type": 2, "kernel_size": 2}, _f(1, 2, 4, 4, 4)),
    "ChannelShuffle": ({"type": "ChannelShuffle", "groups": 2}, _f(2, 4, 3)),
    "FractionalMaxPool2d": ({"type": "FractionalMaxPool2d", "kernel_size": 2,
                             "output_size": [3, 4]}, _f(2, 3, 7, 8)),
    "FractionalMaxPool3d": ({"type": "FractionalMaxPool3d", "kernel_size": [2, 1, 2],
                             "output_ratio": 0.5}, _f(1, 2, 6, 4, 6)),
    "CrossMapLRN2d": ({"type": "CrossMapLRN2d", "size": 3, "alpha": 0.3, "k": 1.5},
                      _f(2, 5, 3, 3)),
    "ConvTranspose3d": ({"type": "ConvTranspose3d", "in_channels": 2, "out_channels": 2,
                         "kernel_size": 2, "stride": 2, "padding": 1}, _f(2, 2, 2, 3, 2)),
    "LazyLinear": ({"type": "LazyLinear", "out_features": 3}, _f(4, 5)),
    "LazyConv1d": ({"type": "LazyConv1d", "out_channels": 4, "kernel_size": 3}, _f(2, 3, 6)),
    "LazyConv2d": ({"type": "LazyConv2d", "out_channels": 4, "kernel_size": 3, "padding": 1},
                   _f(2, 3, 5, 5)),
    "LazyConv3d": ({"type": "LazyConv3d", "out_channels": 2, "kernel_size": 2},
                   _f(1, 3, 3, 3, 3)),
    "LazyConvTranspose1d": ({"type": "LazyConvTranspose1d", "out_channels": 2,
                             "kernel_size": 3}, _f(2, 3, 5)),
    "LazyConvTranspose2d": ({"type": "LazyConvTranspose2d", "out_channels": 2,
                             "kernel_size": 2, "stride": 2}, _f(2, 3, 3, 3)),
    "LazyConvTranspose3d": ({"type": "LazyConvTranspose3d", "out_channels": 2,
                             "kernel_size": 2}, _f(1, 3, 2, 2, 2)),
    "LazyBatchNorm1d": ({"type": "LazyBatchNorm1d"}, _f(5, 3)),
    "LazyBatchNorm2d": ({"type": "LazyBatchNorm2d"}, _f(4, 3, 2, 2)),
    "LazyBatchNorm3d": ({"type": "LazyBatchNorm3d"}, _f(3, 2, 2, 3, 2)),
    "LazyInstanceNorm1d": ({"type": "LazyInstanceNorm1d"}, _f(2, 3, 5)),
    "LazyInstanceNorm2d": ({"type": "LazyInstanceNorm2d", "affine": False}, _f(2, 3, 4, 4)),
    "LazyInstanceNorm3d": ({"type": "LazyInstanceNorm3d"}, _f(2, 2, 2, 3, 2)),
    "SyncBatchNorm": ({"type": "SyncBatchNorm", "num_features": 3}, _f(4, 3, 2, 2)),
    "AdaptiveMaxPool2d": ({"type": "AdaptiveMaxPool2d", "output_size": [2, 3]},
                          _f(2, 3, 5, 7)),
    "EmbeddingBag": ({"type": "EmbeddingBag", "num_embeddings": 6, "embedding_dim": 3,
                      "mode": "mean", "padding_idx": 0}, lambda rng: rng.integers(0, 6, (3, 4))),
    **{f"{kind}Pad{nd}d": ({"type": f"{kind}Pad{nd}d", "padding": 1,
                             **({"value": 0.5} if kind == "Constant" else {})},
                            _f(2, 2, *(3,) * nd))
       for kind in ("Constant", "Zero", "Reflection", "Replication", "Circular")
       for nd in (1, 2, 3)},
    "Flatten": ({"type": "Flatten"}, _f(2, 3, 4)),
    "ReLU": ({"type": "ReLU"}, _f(3, 4)),
    "LeakyReLU": ({"type": "LeakyReLU", "negative_slope": 0.1}, _f(3, 4)),
    "GELU": ({"type": "GELU", "approximate": "tanh"}, _f(3, 4)),
    "Sigmoid": ({"type": "Sigmoid"}, _f(3, 4)),
    "Tanh": ({"type": "Tanh"}, _f(3, 4)),
    "Softmax": ({"type": "Softmax", "axis": 1}, _f(3, 4)),
    "LogSoftmax": ({"type": "LogSoftmax", "dim": 1}, _f(3, 4)),
    "RNNCell": ({"type": "RNNCell", "input_size": 3, "hidden_size": 4,
                 "nonlinearity": "relu"}, _f(2, 3)),
    "LSTMCell": ({"type": "LSTMCell", "input_size": 3, "hidden_size": 4}, _f(2, 3)),
    "GRUCell": ({"type": "GRUCell", "input_size": 3, "hidden_size": 4, "bias": False},
                _f(2, 3)),
    "Softmin": ({"type": "Softmin", "dim": 0}, _f(3, 4)),
    "GLU": ({"type": "GLU", "dim": 1}, _f(3, 4)),
    "Hardtanh": ({"type": "Hardtanh", "min_val": -0.5, "max_val": 0.7}, _f(3, 4)),
    "Threshold": ({"type": "Threshold", "threshold": 0.1, "value": -2.0}, _f(3, 4)),
    "CELU": ({"type": "CELU", "alpha": 0.5}, _f(3, 4)),
    "PReLU": ({"type": "PReLU", "num_parameters": 2, "init": 0.1}, _f(3, 2, 4)),
    "ReLU6": ({"type": "ReLU6"}, lambda rng: rng.uniform(-8, 8, (3, 4)).astype(np.float32)),
    "Hardsigmoid": ({"type": "Hardsigmoid"}, lambda rng: rng.uniform(-5, 5, (3, 4))
                    .astype(np.float32)),
    "Hardswish": ({"type": "Hardswish"}, lambda rng: rng.uniform(-5, 5, (3, 4))
                  .astype(np.float32)),
    "Mish": ({"type": "Mish"}, _f(3, 4)),
    "SELU": ({"type": "SELU"}, _f(3, 4)),
    "Softsign": ({"type": "Softsign"}, _f(3, 4)),
    "Tanhshrink": ({"type": "Tanhshrink"}, _f(3, 4)),
    "LogSigmoid": ({"type": "LogSigmoid"}, _f(3, 4)),
    "Embedding": ({"type": "Embedding", "num_embeddings": 6, "embedding_dim": 3,
                   "padding_idx": 2},
                  lambda rng: rng.integers(0, 6, (2, 5))),
    "RNN": ({"type": "RNN", "batch_first": True, "input_size": 3, "hidden_size": 4, "num_layers": 2}, _f(2, 5, 3)),
    "LSTM": ({"type": "LSTM", "batch_first": True, "input_size": 3, "hidden_size": 4, "num_layers": 2,
              "bidirectional": True}, _f(2, 5, 3)),
    "GRU": ({"type": "GRU", "input_size": 3, "hidden_size": 4, "num_layers": 2,
             "batch_first": False, "bidirectional": True, "dropout": 0.3}, _f(5, 2, 3)),
    "RBM": ({"type": "RBM", "n_visible": 6, "n_hidden": 4}, _binary(5, 6)),
    "Sequential": ({"type": "Sequential", "layers": [
        {"type": "Conv2d", "in_channels": 1, "out_channels": 2, "kernel_size": 3},
        {"type": "BatchNorm2d", "num_features": 2}, {"type": "ReLU"},
        {"type": "MaxPool2d", "kernel_size": 2}, {"type": "Flatten"},
        {"type": "Linear", "in_features": 8, "out_features": 3}]}, _f(2, 1, 6, 6)),
    "LayerNorm": ({"type": "LayerNorm", "normalized_shape": [3, 4], "eps": 1e-4},
                  _f(2, 5, 3, 4)),
    "SelfAttention": ({"type": "SelfAttention", "embed_dim": 6, "num_heads": 2,
                            "dropout": 0.25, "causal": True, "batch_first": False},
                           _f(5, 2, 6)),
    "TransformerEncoderLayer": ({"type": "TransformerEncoderLayer", "batch_first": True, "d_model": 6, "nhead": 3,
                                 "dim_feedforward": 8, "dropout": 0.2, "activation": "gelu",
                                 "norm_first": True, "causal": True}, _f(2, 4, 6)),
    "PositionalEncoding": ({"type": "PositionalEncoding", "embedding_dim": 5, "max_len": 8,
                            "learned": True, "batch_first": False}, _f(6, 2, 5)),
    "Identity": ({"type": "Identity"}, _f(3, 4)),
    "Standardize": ({"type": "Standardize", "num_features": 3, "mean": [0.5, -1.0, 2.0],
                     "std": [2.0, 0.5, 1.5]}, _f(2, 3, 4)),
    "Residual": ({"type": "Residual", "layers": [
        {"type": "Conv2d", "in_channels": 2, "out_channels": 3, "kernel_size": 3, "padding": 1},
        {"type": "ReLU"}],
        "shortcut": {"type": "Conv2d", "in_channels": 2, "out_channels": 3, "kernel_size": 1}},
        _f(2, 2, 4, 4)),
    "Concat": ({"type": "Concat", "axis": -1, "branches": [
        {"type": "Linear", "in_features": 4, "out_features": 3},
        {"type": "Sequential", "layers": [{"type": "LayerNorm", "normalized_shape": 4},
                                          {"type": "Tanh"}]}]}, _f(2, 4)),
}


def flat_outputs(y):
    """A layer's outputs (a tensor, or nested tuples for recurrent layers) as a flat list."""
    if isinstance(y, (tuple, list)):
        return [t for item in y for t in flat_outputs(item)]
    return [y]


# The layers a model is built from, one input each (losses take a target too: plans and
# ONNX export work on models, with the loss given apart)
MODEL_CASES = {k: v for k, v in LAYER_CASES.items()
               if k not in LOSS_CASES and k not in MULTI_INPUT_CASES}

