"""Every differentiable op, grouped by kind. Import as `import lamina.functions as F`."""

from lamina.functions.activation import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    sigmoid,
    softmax,
    tanh,
)
from lamina.functions.array import concat, flatten, pad, split, stack
from lamina.functions.connection import embedding, linear
from lamina.functions.conv import conv1d, conv2d
from lamina.functions.loss import (
    binary_cross_entropy_with_logits,
    cross_entropy,
    mse_loss,
    nll_loss,
)
from lamina.functions.math import (
    abs,
    add,
    astype,
    broadcast_to,
    clip,
    div,
    exp,
    getitem,
    log,
    matmul,
    max,
    mean,
    min,
    mul,
    neg,
    pow,
    reshape,
    sqrt,
    sub,
    sum,
    transpose,
)
from lamina.functions.noise import dropout
from lamina.functions.normalization import batch_norm
from lamina.functions.pooling import avg_pool1d, avg_pool2d, max_pool1d, max_pool2d

__all__ = [
    "abs", "add", "astype", "avg_pool1d", "avg_pool2d", "batch_norm",
    "binary_cross_entropy_with_logits", "broadcast_to", "clip", "concat", "conv1d", "conv2d",
    "cross_entropy", "div", "dropout", "elu", "embedding", "exp", "flatten", "gelu", "getitem",
    "leaky_relu", "linear", "log", "log_softmax", "matmul", "max", "max_pool1d", "max_pool2d",
    "mean", "min", "mse_loss", "mul", "neg", "nll_loss", "pad", "pow", "relu", "reshape",
    "sigmoid", "softmax", "split", "sqrt", "stack", "sub", "sum", "tanh", "transpose",
]
