"""PyTorch's in-place methods: fills and copies (`zero_`, `fill_`, `copy_`, the random
fills), and the `_` form of every elementwise, compare and cumulative op that has one.
Each is its out-of-place op written into the tensor through `Tensor._inplace`, which
keeps PyTorch's rules: version counters, the graph, and no writes to a leaf that
requires grad."""

from __future__ import annotations

from typing import Any

import numpy as np


def _inplace(name: str, example: str = "",
             tensor: str = "lm.tensor([[0.5, 0.75], [0.2, 0.25]])") -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self._inplace(lambda t: getattr(t, name)(*args, **kwargs))
    method.__name__ = name + "_"
    method.__doc__ = (f"`{name}({example})` written into this tensor's memory; returns self.\n\n"
                      f"Example:\n    >>> x = {tensor}\n"
                      f"    >>> x.{name}_({example}) is x\n    True")
    return method


def _zero_link(t: Any) -> Any:
    """0, or t * 0 where t is in the graph: an overwritten tensor still hands its history
    a gradient (of zeros), as PyTorch's fill_ and copy_ do."""
    return t * 0 if t.requires_grad else 0


def _fill(name: str, doc: str, draw: Any) -> Any:
    def method(self: Any, *args: Any, generator: Any = None, **kwargs: Any) -> Any:
        from lamina.random import numpy_rng

        return self._write_constant(draw(numpy_rng(generator), self.shape, *args, **kwargs))
    method.__name__ = name
    method.__doc__ = (f"Fill with draws from {doc}, in place.\n\nExample:\n"
                      f"    >>> lm.empty(3).{name}().shape\n    lamina.Size([3])")
    return method


def _random(rng: Any, shape: Any, low: int = 0, high: int | None = None) -> Any:
    if high is None:  # random_(to): [0, to); random_(): [0, 2**24], float32's exact range
        low, high = (0, low) if low else (0, 2**24 + 1)
    return rng.integers(low, high, shape)


class InplaceMethods:
    __slots__ = ()

    def zero_(self) -> Any:
        """Fill with zeros, in place.

        Examples:
            >>> lm.ones(2).zero_()
            tensor([0., 0.])
        """
        return self.fill_(0)

    def fill_(self, value: Any) -> Any:
        """Fill with `value` (a number or 0-d tensor), in place.

        Examples:
            >>> lm.zeros(2).fill_(3.0)
            tensor([3., 3.])
        """
        if hasattr(value, "array"):  # a 0-d tensor: its gradient is the sum of ours
            return self.copy_(value)
        return self._write_constant(np.full(self.shape, value))

    def copy_(self, src: Any, non_blocking: bool = False) -> Any:
        """Copy src's values (broadcast, cast) into this tensor; gradients flow to src.

        Examples:
            >>> lm.zeros(2, 2).copy_(lm.tensor([1.0, 2.0]))
            tensor([[1., 2.],
                    [1., 2.]])
        """
        from lamina.functions.operands import cast

        def copied(t: Any) -> Any:
            s = src if hasattr(src, "array") else type(t)(np.asarray(src))
            return cast(s, t.dtype).expand(tuple(t.shape)) + _zero_link(t)
        return self._inplace(copied)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Any:
        """Fill with normal draws, in place.

        Examples:
            >>> lm.empty(3).normal_(0, 1).shape
            lamina.Size([3])
        """
        from lamina.random import numpy_rng

        draws = numpy_rng(generator).standard_normal(self.shape) * std + mean
        return self._write_constant(draws)

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Any:
        """Fill with uniform draws from [a, b), in place.

        Examples:
            >>> bool((lm.empty(3).uniform_(0, 1) < 1).all())
            True
        """
        from lamina.random import numpy_rng

        return self._write_constant(numpy_rng(generator).uniform(a, b, self.shape))

    def bernoulli_(self, p: float = 0.5, *, generator: Any = None) -> Any:
        """Fill with 1 (probability p) or 0, in place.

        Examples:
            >>> lm.empty(3).bernoulli_(0.5).shape
            lamina.Size([3])
        """
        from lamina.random import numpy_rng

        return self._write_constant(numpy_rng(generator).random(self.shape) < p)

    def _write_constant(self, values: Any) -> Any:
        def write(t: Any) -> Any:
            with np.errstate(over="ignore", invalid="ignore"):  # out of range: inf, silently
                array = np.asarray(values, t.dtype)
            return type(t)(array) + _zero_link(t)
        return self._inplace(write)

    add_, sub_, mul_, div_ = (_inplace(n, "2") for n in ("add", "sub", "mul", "div"))
    pow_, fmod_, remainder_ = (_inplace(n, "2") for n in ("pow", "fmod", "remainder"))
    clamp_, clip_ = _inplace("clamp", "0.3, 0.6"), _inplace("clip", "0.3, 0.6")
    neg_, abs_, exp_, log_, sqrt_ = (_inplace(n) for n in ("neg", "abs", "exp", "log", "sqrt"))
    sigmoid_, tanh_, relu_ = (_inplace(n) for n in ("sigmoid", "tanh", "relu"))
    floor_, ceil_, round_, trunc_ = (_inplace(n) for n in ("floor", "ceil", "round", "trunc"))
    masked_fill_ = _inplace("masked_fill", "x > 0.3, 0.0")
    index_fill_ = _inplace("index_fill", "1, lm.tensor([0]), 0.0")
    index_add_ = _inplace("index_add", "0, lm.tensor([1]), x[:1]")
    scatter_ = _inplace("scatter", "1, lm.tensor([[1], [0]]), 9.0")
    scatter_add_ = _inplace("scatter_add", "1, lm.tensor([[1], [0]]), x[:, :1]")
    lerp_ = _inplace("lerp", "x.flip(0), 0.5")
    addmm_, square_, reciprocal_ = (_inplace("addmm", "x, x"), _inplace("square"),
                                    _inplace("reciprocal"))
    tril_, triu_ = _inplace("tril"), _inplace("triu")


    for _name, _example in [
            *((n, "") for n in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                                "asinh", "atanh", "arcsin", "arccos", "arctan", "log1p",
                                "log2", "log10", "expm1", "exp2", "rsqrt", "sign", "erf",
                                "frac", "fix", "negative", "absolute", "logical_not", "sgn",
                                "erfinv", "deg2rad", "rad2deg", "arcsinh", "arctanh", "erfc",
                                "sinc", "i0")),
            *((n, "0.3") for n in ("eq", "ne", "lt", "le", "gt", "ge", "less", "less_equal",
                                   "greater", "greater_equal", "not_equal", "clamp_min",
                                   "clamp_max")),
            *((n, "2") for n in ("multiply", "divide", "subtract", "true_divide",
                                 "floor_divide", "float_power")),
            *((n, "x") for n in ("atan2", "arctan2", "logical_and", "logical_or",
                                 "logical_xor", "xlogy", "hypot", "copysign", "heaviside",
                                 "ldexp", "igamma", "igammac")),
            ("cumsum", "1"), ("cumprod", "1"), ("addcmul", "x, x"), ("addcdiv", "x, x"),
            ("nan_to_num", ""), ("logit", ""), ("index_copy", "0, lm.tensor([1]), x[:1]"),
            ("masked_scatter", "x > 0.3, x")]:
        locals()[_name + "_"] = _inplace(_name, _example)
    del _name, _example

    for _name, _example in [("bitwise_and", "3"), ("bitwise_or", "3"), ("bitwise_xor", "3"),
                            ("bitwise_not", ""), ("gcd", "4"), ("lcm", "4"),
                            ("bitwise_left_shift", "1"), ("bitwise_right_shift", "1")]:
        locals()[_name + "_"] = _inplace(_name, _example, "lm.tensor([[6, 3], [4, 5]])")
    for _name in ("acosh", "arccosh"):
        locals()[_name + "_"] = _inplace(_name, "", "lm.tensor([[1.5, 2.0], [3.0, 4.0]])")
    del _name, _example

    random_ = _fill("random_", "the integers [from, to) (`random_(from, to)`, "
                    "`random_(to)`)", _random)
    exponential_ = _fill("exponential_", "the exponential law of rate `lambd`",
                         lambda rng, shape, lambd=1.0: rng.exponential(1 / lambd, shape))
    log_normal_ = _fill("log_normal_", "the log-normal law exp(N(mean, std**2))",
                        lambda rng, shape, mean=1.0, std=2.0: rng.lognormal(mean, std, shape))
    cauchy_ = _fill("cauchy_", "the Cauchy law at `median` with scale `sigma`",
                    lambda rng, shape, median=0.0, sigma=1.0:
                    median + sigma * rng.standard_cauchy(shape))
    geometric_ = _fill("geometric_", "the geometric law (trials to the first success of "
                       "probability p; p=0.5 by default)",
                       lambda rng, shape, p=0.5: rng.geometric(p, shape))

    def fill_diagonal_(self, fill_value: float, wrap: bool = False) -> Any:
        """Write `fill_value` on the main diagonal (of a 2-D tensor, or of one whose dims are
        all equal), in place; with `wrap`, a tall matrix's diagonal starts again every
        cols + 1 rows, as PyTorch's.

        Examples:
            >>> lm.zeros(2, 3).fill_diagonal_(1.0).tolist()
            [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
        """
        shape = tuple(self.shape)
        if len(shape) < 2 or (len(shape) > 2 and len(set(shape)) != 1):
            raise RuntimeError(f"fill_diagonal_: the tensor must be 2-D or have all dims "
                               f"equal; got shape {shape}")
        mask = np.zeros(shape, bool)
        if len(shape) > 2:
            mask[(np.arange(shape[0]),) * len(shape)] = True
        else:
            rows, cols = shape
            step = rows if wrap else min(rows, cols)
            flat = np.arange(0, rows * cols if wrap else step * (cols + 1), cols + 1)
            mask.reshape(-1)[flat[flat < rows * cols]] = True
        from lamina.creation import as_tensor

        return self.masked_fill_(as_tensor(mask), fill_value)
