"""Define-by-run autograd: Tensor, the backward engine, grad modes, custom ops and gradient
checking. Mirrors `torch.autograd`: `lamina.autograd.Function` is PyTorch's ctx-style
custom op, `lamina.autograd.grad` returns gradients without accumulating them."""

# Tensor's module first: loading it loads the ops its methods call, which need Function.
from lamina.autograd.tensor import Tensor, tensor  # noqa: I001
from lamina.autograd import forward_ad, functional
from lamina.autograd.anomaly import detect_anomaly, set_detect_anomaly
from lamina.autograd.custom import Function, FunctionCtx
from lamina.autograd.engine import backward, backward_stream, grad
from lamina.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck
from lamina.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

Variable = Tensor  # PyTorch's old wrapper: Variable(x, requires_grad=True) makes a tensor

__all__ = [
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Tensor",
    "Variable",
    "backward",
    "backward_stream",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
    "tensor",
]


def __getattr__(name: str) -> object:
    if name == "profiler":  # it loads json, gzip and socket: at first use, not on import
        import importlib

        return importlib.import_module("lamina.autograd.profiler")
    raise AttributeError(f"module 'lamina.autograd' has no attribute {name!r}")
