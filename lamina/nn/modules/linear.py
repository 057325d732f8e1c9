"""`lamina.nn.modules.linear` (torch.nn.modules.linear): the linear maps, under PyTorch's
module path."""

from lamina.nn import (
    Bilinear,
    Identity,
    LazyLinear,
    Linear,
)
from lamina.nn.linear import NonDynamicallyQuantizableLinear

__all__ = ["Bilinear", "Identity", "LazyLinear", "Linear", "NonDynamicallyQuantizableLinear"]
