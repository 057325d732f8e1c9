"""`lamina.nn.utils`, as `torch.nn.utils`: gradient clipping, flattening parameters to
one vector and back, weight and spectral normalisation, padded and packed
sequences (in `rnn`) and pruning (in `prune`)."""

from lamina.nn.utils import parametrizations, parametrize, prune, rnn, stateless
from lamina.nn.utils.clip_grad import (
    clip_grad_norm,
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
)
from lamina.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from lamina.nn.utils.fusion import (
    fuse_conv_bn_eval,
    fuse_conv_bn_weights,
    fuse_linear_bn_eval,
    fuse_linear_bn_weights,
    skip_init,
)
from lamina.nn.utils.weight_norms import (
    remove_spectral_norm,
    remove_weight_norm,
    spectral_norm,
    weight_norm,
)

__all__ = [
    "parametrizations",
    "parametrize",
    "prune",
    "rnn",
    "stateless",
    "clip_grad_norm",
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "vector_to_parameters",
    "remove_spectral_norm",
    "remove_weight_norm",
    "spectral_norm",
    "weight_norm",
    "fuse_conv_bn_eval",
    "fuse_conv_bn_weights",
    "fuse_linear_bn_eval",
    "fuse_linear_bn_weights",
    "skip_init",
]
