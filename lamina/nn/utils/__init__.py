"""`lamina.nn.utils`, as `torch.nn.utils`: gradient clipping and flattening parameters to
one vector and back."""

from lamina.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_
from lamina.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "vector_to_parameters",
]
