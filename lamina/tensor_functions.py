"""The functions PyTorch has at top level (`torch.exp(x)`, `torch.max(x, 1)`,
`torch.cat(...)`), each the Tensor method of the same name called on its first argument,
so the function and the method can never disagree."""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.functions.linalg import einsum  # noqa: F401 (re-exported)
from lamina.functions.shape import cat, hstack, stack, vstack  # noqa: F401 (re-exported)

concat = concatenate = cat

_METHODS = [
    "abs", "absolute", "neg", "negative", "exp", "exp2", "expm1", "log", "log1p", "log2",
    "log10", "sqrt", "rsqrt", "square", "pow", "reciprocal", "sin", "cos", "tan", "asin",
    "acos", "atan", "arcsin", "arccos", "arctan", "atan2", "sinh", "cosh", "asinh", "atanh",
    "tanh", "sigmoid", "relu", "erf", "floor", "ceil", "round", "trunc", "fix", "frac",
    "sign", "fmod", "remainder", "lerp", "clamp", "clip", "add", "sub", "subtract", "mul",
    "multiply", "div", "divide", "true_divide", "floor_divide", "maximum", "minimum",
    "matmul", "mm", "bmm", "mv", "dot", "outer", "ger", "addmm", "sum", "mean", "std",
    "var", "prod", "norm", "logsumexp", "cumsum", "cumprod", "max", "min", "amax", "amin",
    "argmax", "argmin", "sort", "argsort", "topk", "kthvalue", "median", "mode", "all",
    "any", "count_nonzero", "eq", "ne", "lt", "le", "gt", "ge", "less", "less_equal",
    "greater", "greater_equal", "not_equal", "isnan", "isinf", "isfinite", "isposinf",
    "isneginf", "isclose", "allclose", "equal", "logical_not", "logical_and", "logical_or",
    "logical_xor", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor", "softmax",
    "log_softmax", "reshape", "flatten", "unflatten", "permute", "transpose", "swapaxes",
    "swapdims", "t", "squeeze", "unsqueeze", "narrow", "chunk", "split", "unbind", "flip",
    "fliplr", "flipud", "roll", "movedim", "moveaxis", "tril", "triu", "diag", "diagonal",
    "trace", "gather", "scatter", "scatter_add", "index_select", "index_add", "index_fill",
    "masked_fill", "masked_select", "nonzero", "argwhere", "repeat_interleave", "clone",
    "numel", "broadcast_to",
]


def _function(name: str) -> Any:
    method = getattr(Tensor, name)

    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                            f"{type(input).__name__}")
        return method(input, *args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"`input.{name}(...)`: see `Tensor.{name}`."
    return function


globals().update({name: _function(name) for name in _METHODS})


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:  # noqa: A002
    """input where condition is true, else other; with the condition alone, the indices of
    its true elements (one tensor per dim)."""
    from lamina.functions.math import where as _where

    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return _where(condition, input, other)


def is_tensor(obj: Any) -> bool:
    """Whether obj is a lamina Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    """Whether input's dtype is a floating-point one."""
    return input.is_floating_point()


__all__ = sorted([*_METHODS, "cat", "concat", "concatenate", "einsum", "hstack", "stack",
                  "vstack", "where", "is_tensor", "is_floating_point"])
