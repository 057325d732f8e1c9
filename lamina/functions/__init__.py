"""Every differentiable op, grouped by kind. Import as `import lamina.functions as F`."""

from lamina.functions.activation import (
    elu,
    leaky_relu,
    relu,
    sigmoid,
    silu,
    softplus,
    tanh,
)
from lamina.functions.activation_composite import (
    celu,
    glu,
    hardsigmoid,
    hardswish,
    hardtanh,
    logsigmoid,
    mish,
    prelu,
    relu6,
    selu,
    softmin,
    softsign,
    tanhshrink,
    threshold,
)
from lamina.functions.activation_gelu import gelu
from lamina.functions.activation_more import (
    celu_,
    elu_,
    gumbel_softmax,
    hardshrink,
    hardtanh_,
    leaky_relu_,
    relu_,
    rrelu,
    rrelu_,
    selu_,
    softshrink,
    threshold_,
)
from lamina.functions.activation_softmax import log_softmax, softmax
from lamina.functions.adaptive_pool import adaptive_avg_pool1d, adaptive_avg_pool2d
from lamina.functions.array import (
    broadcast_to,
    concat,
    flatten,
    getitem,
    reshape,
    split,
    stack,
    transpose,
    unbind,
)
from lamina.functions.attention import scaled_dot_product_attention
from lamina.functions.axis_reductions import max, mean, min, sum
from lamina.functions.connection import bilinear, embedding, linear
from lamina.functions.conv import conv1d, conv2d
from lamina.functions.conv_transpose import conv_transpose1d, conv_transpose2d
from lamina.functions.ctc import ctc_loss
from lamina.functions.embedding_bag import embedding_bag
from lamina.functions.feature_scaling import standardize
from lamina.functions.fractional_pool import (
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from lamina.functions.grid_sample import grid_sample
from lamina.functions.indexing import one_hot
from lamina.functions.instance_norm import instance_norm, local_response_norm
from lamina.functions.linear_cross_entropy import (
    LinearCrossEntropyOptions,
    linear_cross_entropy,
)
from lamina.functions.loss import cross_entropy, nll_loss
from lamina.functions.loss_embedding import (
    cosine_embedding_loss,
    cosine_similarity,
    hinge_embedding_loss,
    margin_ranking_loss,
    multilabel_soft_margin_loss,
    normalize,
    pairwise_distance,
    pdist,
    triplet_margin_loss,
)
from lamina.functions.loss_margin import (
    multi_margin_loss,
    multilabel_margin_loss,
    triplet_margin_with_distance_loss,
)
from lamina.functions.loss_pointwise import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    gaussian_nll_loss,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    poisson_nll_loss,
    smooth_l1_loss,
    soft_margin_loss,
)
from lamina.functions.math import add, div, maximum, minimum, mul, pow, sub, where
from lamina.functions.noise import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from lamina.functions.normalization import batch_norm
from lamina.functions.operands import astype
from lamina.functions.padding import pad
from lamina.functions.pooling import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d
from lamina.functions.pooling_more import (
    adaptive_avg_pool3d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    channel_shuffle,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_pool1d_with_indices,
    max_pool2d_with_indices,
    max_pool3d_with_indices,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from lamina.functions.product import matmul
from lamina.functions.recurrent import lstm_cell, lstm_sequence
from lamina.functions.recurrent_gru import gru_cell, gru_sequence
from lamina.functions.resample import interpolate
from lamina.functions.sample_norm import group_norm, layer_norm, rms_norm
from lamina.functions.spatial import affine_grid, fold, pixel_shuffle, pixel_unshuffle, unfold
from lamina.functions.unary import abs, clip, exp, log, neg, sqrt
from lamina.functions.unpool import max_unpool1d, max_unpool2d, max_unpool3d
from lamina.functions.volume import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    avg_pool3d,
    conv3d,
    max_pool3d,
)
from lamina.functions.volume_transpose import conv_transpose3d

__all__ = [
    "bilinear",
    "ctc_loss",
    "embedding_bag",
    "grid_sample",
    "instance_norm",
    "local_response_norm",
    "fractional_max_pool2d",
    "fractional_max_pool3d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices",
    "native_channel_shuffle",
    "alpha_dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
    "affine_grid",
    "fold",
    "pixel_shuffle",
    "pixel_unshuffle",
    "unfold",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "avg_pool3d",
    "conv3d",
    "max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "celu",
    "glu",
    "gumbel_softmax",
    "hardshrink",
    "softshrink",
    "rrelu",
    "rrelu_",
    "relu_",
    "elu_",
    "leaky_relu_",
    "hardtanh_",
    "selu_",
    "celu_",
    "threshold_",
    "rms_norm",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "logsigmoid",
    "mish",
    "prelu",
    "relu6",
    "selu",
    "softmin",
    "softsign",
    "tanhshrink",
    "threshold",
    "one_hot",
    "cosine_embedding_loss",
    "cosine_similarity",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "multilabel_soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "triplet_margin_with_distance_loss",
    "adaptive_avg_pool3d",
    "adaptive_max_pool3d",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "channel_shuffle",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "conv_transpose3d",
    "normalize",
    "pairwise_distance",
    "pdist",
    "LinearCrossEntropyOptions",
    "linear_cross_entropy",
    "triplet_margin_loss",
    "binary_cross_entropy",
    "gaussian_nll_loss",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "poisson_nll_loss",
    "smooth_l1_loss",
    "soft_margin_loss",
    "abs",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "add",
    "astype",
    "avg_pool1d",
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy_with_logits",
    "broadcast_to",
    "clip",
    "concat",
    "conv1d",
    "conv2d",
    "conv_transpose1d",
    "conv_transpose2d",
    "cross_entropy",
    "div",
    "dropout",
    "elu",
    "embedding",
    "exp",
    "flatten",
    "gelu",
    "getitem",
    "group_norm",
    "gru_cell",
    "gru_sequence",
    "interpolate",
    "layer_norm",
    "leaky_relu",
    "linear",
    "log",
    "log_softmax",
    "lstm_cell",
    "lstm_sequence",
    "matmul",
    "max",
    "max_pool1d",
    "max_pool2d",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mse_loss",
    "mul",
    "neg",
    "nll_loss",
    "pad",
    "pow",
    "relu",
    "reshape",
    "scaled_dot_product_attention",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "split",
    "sqrt",
    "stack",
    "standardize",
    "sub",
    "sum",
    "tanh",
    "transpose",
    "unbind",
    "where",
]

# Tensor's PyTorch methods and operators call the ops above: installed once they exist.
from lamina.functions.tensor_methods import install as _install  # noqa: E402

_install()

# The ops' differentiable backward rules (create_graph=True), registered with autograd.
from lamina.functions import derivatives as _derivatives  # noqa: E402, F401
from lamina.functions import derivatives_layers as _derivatives_layers  # noqa: E402, F401
from lamina.functions import derivatives_linalg as _derivatives_linalg  # noqa: E402, F401
from lamina.functions import derivatives_more as _derivatives_more  # noqa: E402, F401
from lamina.functions import derivatives_recurrent as _derivatives_recurrent  # noqa: E402, F401

native_channel_shuffle = channel_shuffle  # PyTorch's name for the same op
