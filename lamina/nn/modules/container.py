"""`lamina.nn.modules.container` (torch.nn.modules.container): the containers, under PyTorch's
module path."""

from lamina.nn import (
    ModuleDict,
    ModuleList,
    ParameterDict,
    ParameterList,
    Sequential,
)

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]
