"""Define-by-run autograd: Tensor, Function, the backward engine and gradient checking."""

from lamina.autograd.engine import backward, backward_stream
from lamina.autograd.function import Function
from lamina.autograd.gradcheck import GradcheckError, gradcheck
from lamina.autograd.tensor import Tensor, tensor

__all__ = [
    "Function",
    "GradcheckError",
    "Tensor",
    "backward",
    "backward_stream",
    "gradcheck",
    "tensor",
]
