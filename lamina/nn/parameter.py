"""`lamina.nn.parameter` (torch.nn.parameter): Parameter, Buffer and the uninitialized
ones of lazy modules, under PyTorch's module path."""

from lamina.nn.layer import Parameter
from lamina.nn.lazy import UninitializedBuffer, UninitializedParameter
from lamina.nn.state_dict import Buffer

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter"]
