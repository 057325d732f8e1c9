"""`lamina.nn.modules` (torch.nn.modules): every layer, and the submodules PyTorch code imports
from (`from torch.nn.modules.batchnorm import _BatchNorm`), each a view of lamina.nn."""

from lamina.nn import *  # noqa: F403
from lamina.nn import __all__  # noqa: F401
from lamina.nn.modules import (  # noqa: F401 - PyTorch's submodules, importable by name
    activation,
    batchnorm,
    channelshuffle,
    container,
    conv,
    distance,
    dropout,
    flatten,
    fold,
    instancenorm,
    lazy,
    linear,
    loss,
    module,
    normalization,
    padding,
    pixelshuffle,
    pooling,
    rnn,
    sparse,
    transformer,
    upsampling,
)
