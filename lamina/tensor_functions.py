"""The functions PyTorch has at top level (`torch.exp(x)`, `torch.max(x, 1)`,
`torch.cat(...)`), each the Tensor method of the same name called on its first argument,
so the function and the method can never disagree."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.dtypes import Size
from lamina.functions.complex import (  # noqa: F401 (re-exported)
    complex,
    imag,
    polar,
    real,
    view_as_complex,
    view_as_real,
)
from lamina.functions.linalg import einsum  # noqa: F401 (re-exported)
from lamina.functions.shape import cat, hstack, stack, vstack  # noqa: F401 (re-exported)
from lamina.functions.stft import istft, stft  # noqa: F401 (re-exported)

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
    # built from other ops (tensor_methods/composite.py, slicing.py, statistics.py)
    "addcmul", "addcdiv", "clamp_min", "clamp_max", "nan_to_num", "nansum", "nanmean",
    "logit", "xlogy", "logaddexp", "logaddexp2", "hypot", "deg2rad", "rad2deg", "sgn",
    "positive", "signbit", "float_power", "fmax", "fmin", "copysign", "heaviside", "acosh",
    "arccosh", "erfc", "dist", "inner", "inverse", "ravel", "tile", "select", "tensor_split",
    "hsplit", "vsplit", "dsplit", "split_with_sizes", "take_along_dim", "diff", "rot90",
    "index_copy", "cummax", "cummin", "aminmax", "msort", "quantile", "unique",
    "unique_consecutive", "bincount", "histc", "conj", "resolve_conj", "resolve_neg",
    "is_conj", "is_complex", "adjoint", "arcsinh", "arctanh", "sinc", "ldexp", "gcd", "lcm",
    "vdot", "kron", "cross", "diag_embed", "take", "index_put", "masked_scatter", "isreal",
    "is_nonzero", "is_same_size", "det", "slogdet", "logdet", "erfinv", "lgamma", "digamma",
    "mvlgamma", "addmv", "addr", "addbmm", "baddbmm", "matrix_power", "scatter_reduce",
    "slice_scatter", "select_scatter", "diagonal_scatter", "logcumsumexp", "nanmedian",
    "nanquantile", "narrow_copy", "unsafe_chunk", "unsafe_split", "frexp", "renorm",
    "arctan2", "detach", "is_inference", "is_signed", "is_neg", "get_device",
    "unsafe_split_with_sizes", "conj_physical", "bitwise_left_shift", "bitwise_right_shift",
    "svd", "qr", "cholesky", "cholesky_solve", "cholesky_inverse", "pinverse", "matrix_exp",
    "triangular_solve", "put", "index_reduce", "as_strided", "nextafter", "nonzero_static",
    "lu", "lu_solve", "i0", "igamma", "igammac", "angle",
    # PyTorch's torch.<op>_(x), each x.<op>_()
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_",
    "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "log10_", "log1p_", "log2_", "log_",
    "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "xlogy_", "zero_", "gcd_", "lcm_", "ldexp_", "addmv_", "resize_as_", "i0_",
]


# deprecated in PyTorch, warning once (tensor_methods/linalg_methods.py): examples not run
_DEPRECATED = {"cholesky", "qr", "triangular_solve", "lu", "lu_solve"}


def _function(name: str) -> Any:
    method = getattr(Tensor, name)

    def function(input: Tensor, *args: Any, **kwargs: Any) -> Any:  # noqa: A002
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                            f"{type(input).__name__}")
        return method(input, *args, **kwargs)
    function.__name__ = function.__qualname__ = name
    first = "x > 0.3" if name in ("bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor",
                                  "nonzero", "argwhere") else _FIRST.get(name, "x")
    args = ", ".join([first, *_ARGS.get(name, ())])
    function.__doc__ = (f"`lamina.{name}(input, ...)` is `input.{name}(...)`: see "
                        f"`Tensor.{name}`.\n\nExample:\n"
                        f"    >>> x = lm.tensor([[0.5, 0.75], [0.2, 0.25]])\n"
                        f"    >>> out = lm.{name}({args})"
                        + ("  # doctest: +SKIP" if name in _DEPRECATED
                           else ""))
    return function


_FIRST = {"bmm": "x[None]", "dot": "x[0]", "outer": "x[0]", "ger": "x[0]", "dsplit": "x[None]",
          "bincount": "lm.tensor([0, 2, 2])", "acosh": "x + 1", "arccosh": "x + 1",
          "gcd": "lm.tensor([4, 6])", "lcm": "lm.tensor([4, 6])", "vdot": "x[0]",
          "cross": "lm.ones(2, 3)", "is_nonzero": "x[0, :1]", "diag_embed": "x",
          "addmv": "x[0]", "baddbmm": "x[None]", "addmv_": "x[0]",
          **dict.fromkeys(["cholesky", "cholesky_inverse"], "lm.eye(2) * 2"),
          "matrix_exp": "x", "triangular_solve": "x",
          "acosh_": "x + 1", "arccosh_": "x + 1", "gcd_": "lm.tensor([4, 6])",
          "lcm_": "lm.tensor([4, 6])", "bitwise_left_shift": "lm.tensor([1, 2])",
          "bitwise_right_shift": "lm.tensor([4, 8])",
          **dict.fromkeys(["det", "slogdet", "logdet"], "x + lm.eye(2)")}
# The arguments after `input` in each function's example (none where it takes none).
_ARGS = {
    **dict.fromkeys(["pow", "fmod", "remainder", "add", "sub", "subtract", "mul", "multiply",
                     "div", "divide", "true_divide", "floor_divide", "repeat_interleave",
                     "roll", "chunk", "split"], ("2",)),
    **dict.fromkeys(["eq", "ne", "lt", "le", "gt", "ge", "less", "less_equal", "greater",
                     "greater_equal", "not_equal"], ("0.3",)),
    **dict.fromkeys(["atan2", "arctan2", "maximum", "minimum", "matmul", "mm", "isclose",
                     "allclose", "equal", "logical_and", "logical_or", "logical_xor", "igamma",
                     "igammac"], ("x",)),
    **dict.fromkeys(["bitwise_and", "bitwise_or", "bitwise_xor"], ("x > 0.4",)),
    **dict.fromkeys(["logsumexp", "cumsum", "cumprod", "softmax", "log_softmax", "topk",
                     "kthvalue", "unsqueeze", "mvlgamma", "matrix_power"], ("1",)),
    **dict.fromkeys(["transpose", "swapaxes", "swapdims", "movedim", "moveaxis"], ("0", "1")),
    "lerp": ("x.flip(0)", "0.5"), "clamp": ("0.3", "0.6"), "clip": ("0.3", "0.6"),
    "bmm": ("x[None]",), "mv": ("x[0]",), "dot": ("x[1]",), "outer": ("x[1]",),
    "ger": ("x[1]",), "addmm": ("x", "x"), "addmv": ("x", "x[0]"), "addr": ("x[0]", "x[1]"),
    "addbmm": ("x[None]", "x[None]"), "baddbmm": ("x[None]", "x[None]"),
    "scatter_reduce": ("0", "lm.tensor([[1, 0]])", "x", "'sum'"),
    "slice_scatter": ("x[:1]", "0", "1"), "select_scatter": ("x[0]", "0", "1"),
    "diagonal_scatter": ("x[0]",),
    "logcumsumexp": ("0",), "clamp_": ("0.3",), "clamp_max_": ("0.3",),
    "clamp_min_": ("0.3",), "clip_": ("0.3",), "fill_": ("1.0",), "gcd_": ("lm.tensor([2, 4])",),
    "lcm_": ("lm.tensor([2, 4])",), "ldexp_": ("lm.tensor([1])",), "xlogy_": ("x",),
    "addmv_": ("x", "x[0]"), "resize_as_": ("x",), "arctan2": ("x",),
    "bitwise_left_shift": ("1",), "bitwise_right_shift": ("1",), "nanquantile": ("0.5",),
    "narrow_copy": ("1", "0", "1"), "unsafe_split_with_sizes": ("[1, 1]",),
    "cholesky_solve": ("lm.eye(2)",), "triangular_solve": ("lm.eye(2)",),
    "put": ("lm.tensor([0])", "lm.tensor([1.0])"), "as_strided": ("(2,)", "(1,)"),
    "index_reduce": ("0", "lm.tensor([0])", "x[:1]", "'amax'"), "nextafter": ("x",),
    "nonzero_static": ("size=2",),
    "unsafe_chunk": ("2",), "unsafe_split": ("1",), "renorm": ("2", "0", "0.5"),
    "reshape": ("(4,)",), "unflatten": ("1", "(2, 1)"),
    "permute": ("(1, 0)",), "narrow": ("1", "0", "1"), "flip": ("(0,)",),
    "gather": ("1", "lm.tensor([[1], [0]])"), "scatter": ("1", "lm.tensor([[1], [0]])", "9.0"),
    "scatter_add": ("1", "lm.tensor([[1], [0]])", "x[:, :1]"),
    "index_select": ("0", "lm.tensor([1])"), "index_add": ("0", "lm.tensor([1])", "x[:1]"),
    "index_fill": ("1", "lm.tensor([0])", "0.0"), "masked_fill": ("x > 0.3", "0.0"),
    "masked_select": ("x > 0.3",), "broadcast_to": ("(3, 2, 2)",),
    **dict.fromkeys(["xlogy", "logaddexp", "logaddexp2", "hypot", "fmax", "fmin", "copysign",
                     "heaviside", "dist", "inner"], ("x",)),
    **dict.fromkeys(["addcmul", "addcdiv"], ("x", "x")),
    **dict.fromkeys(["clamp_min", "clamp_max"], ("0.3",)),
    **dict.fromkeys(["tensor_split", "hsplit", "vsplit", "dsplit", "float_power"], ("2",)),
    **dict.fromkeys(["cummax", "cummin"], ("1",)),
    "tile": ("(2,)",), "select": ("0", "1"), "split_with_sizes": ("[1, 1]",),
    "take_along_dim": ("lm.tensor([[1], [0]])", "1"), "quantile": ("0.5",),
    "index_copy": ("0", "lm.tensor([1])", "x[:1]"),
    **dict.fromkeys(["gcd", "lcm"], ("lm.tensor([6, 9])",)),
    "ldexp": ("lm.tensor([2])",), "vdot": ("x[1]",), "kron": ("x",), "take": ("lm.tensor([0, 3])",),
    "cross": ("lm.ones(2, 3)",), "index_put": ("(lm.tensor([0]),)", "lm.tensor(1.0)"),
    "masked_scatter": ("x > 0.3", "lm.ones(4)"), "is_same_size": ("x",),
}


globals().update({name: _function(name) for name in _METHODS})


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:  # noqa: A002
    """input where condition is true, else other; with the condition alone, the indices of
    its true elements (one tensor per dim).

    Examples:
        >>> x = lm.tensor([1.0, -2.0])
        >>> lm.where(x > 0, x, 0.0)
        tensor([1., 0.])
    """
    from lamina.functions.math import where as _where

    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return _where(condition, input, other)


def is_tensor(obj: Any) -> bool:
    """Whether obj is a lamina Tensor.

    Examples:
        >>> lm.is_tensor(lm.zeros(1)), lm.is_tensor([0.0])
        (True, False)
    """
    return isinstance(obj, Tensor)


def is_floating_point(input: Tensor) -> bool:  # noqa: A002
    """Whether input's dtype is a floating-point one.

    Examples:
        >>> lm.is_floating_point(lm.zeros(1))
        True
    """
    return input.is_floating_point()


def broadcast_shapes(*shapes: Any) -> Size:
    """The shape the given shapes broadcast to (an int stands for a 1-D shape).

    Raises:
        RuntimeError: two sizes differ where neither is 1, as PyTorch's.

    Examples:
        >>> lm.broadcast_shapes((2, 1), (3,))
        lamina.Size([2, 3])
    """
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"broadcast_shapes: shapes {', '.join(map(str, shapes))} do not "
                           f"broadcast: sizes must match where neither is 1") from None


def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    """The tensors expanded to their common broadcast shape (views, as `expand` gives).

    Examples:
        >>> a, b = lm.broadcast_tensors(lm.zeros(2, 1), lm.ones(3))
        >>> a.shape, b.shape
        (lamina.Size([2, 3]), lamina.Size([2, 3]))
    """
    shape = broadcast_shapes(*(t.shape for t in tensors))
    return tuple(t if t.shape == shape else t.broadcast_to(shape) for t in tensors)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """The (2, N) row and column indices of a row x col matrix's lower triangle (with
    `offset` diagonals above the main one, or below where negative), row by row.

    Examples:
        >>> lm.tril_indices(2, 2).tolist()
        [[0, 1, 1], [0, 0, 1]]
    """
    from lamina.creation import as_tensor

    return as_tensor(np.stack(np.tril_indices(row, offset, col)), dtype=dtype or np.int64)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: Any = None,
                 device: Any = None) -> Tensor:
    """The (2, N) indices of a row x col matrix's upper triangle, as `tril_indices`.

    Examples:
        >>> lm.triu_indices(2, 2).tolist()
        [[0, 0, 1], [0, 1, 1]]
    """
    from lamina.creation import as_tensor

    return as_tensor(np.stack(np.triu_indices(row, offset, col)), dtype=dtype or np.int64)


def polygamma(n: int, input: Tensor) -> Tensor:  # noqa: A002
    """The n-th derivative of digamma: `input.polygamma(n)` (n comes first, as in PyTorch).

    Examples:
        >>> lm.polygamma(1, lm.tensor([1.0]))
        tensor([1.6449])
    """
    return input.polygamma(n)


__all__ = sorted([*_METHODS, "polygamma", "cat", "concat", "concatenate", "einsum", "hstack",
                  "stack", "vstack", "where", "is_tensor", "is_floating_point", "broadcast_shapes",
                  "broadcast_tensors", "tril_indices", "triu_indices", "complex", "imag",
                  "polar", "real", "view_as_complex", "view_as_real", "stft", "istft"])
