"""`lamina.special`, PyTorch's `torch.special`: the special functions under their SciPy
names (gammaln, psi, expit, ndtr, ...), each the Tensor op it names, so the gradients are
the ops' own.

    >>> from lamina import special
    >>> special.expit(lm.tensor([0.0]))
    tensor([0.5000])
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.functions.math import where


def _tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor(x)


def gammaln(input: Any) -> Tensor:  # noqa: A002 - PyTorch's name
    """log |Gamma(x)| (`Tensor.lgamma`).

    Examples:
        >>> special.gammaln(lm.tensor([4.0]))
        tensor([1.7918])
    """
    return _tensor(input).lgamma()


def digamma(input: Any) -> Tensor:  # noqa: A002
    """The derivative of gammaln (`Tensor.digamma`); `psi` is the same function.

    Examples:
        >>> special.psi(lm.tensor([1.0]))
        tensor([-0.5772])
    """
    return _tensor(input).digamma()


psi = digamma


def polygamma(n: int, input: Any) -> Tensor:  # noqa: A002
    """The n-th derivative of digamma (`Tensor.polygamma`).

    Examples:
        >>> special.polygamma(1, lm.tensor([1.0]))
        tensor([1.6449])
    """
    return _tensor(input).polygamma(n)


def multigammaln(input: Any, p: int) -> Tensor:  # noqa: A002
    """The log of the multivariate gamma function (`Tensor.mvlgamma`).

    Examples:
        >>> special.multigammaln(lm.tensor([2.5]), 2)
        tensor([0.8570])
    """
    return _tensor(input).mvlgamma(p)


def expit(input: Any) -> Tensor:  # noqa: A002
    """The logistic sigmoid 1 / (1 + exp(-x)).

    Examples:
        >>> special.expit(lm.tensor([0.0]))
        tensor([0.5000])
    """
    return _tensor(input).sigmoid()


def logit(input: Any, eps: float | None = None) -> Tensor:  # noqa: A002
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] where eps is given.

    Examples:
        >>> special.logit(lm.tensor([0.5]))
        tensor([0.])
    """
    return _tensor(input).logit(eps)


def ndtr(input: Any) -> Tensor:  # noqa: A002
    """The standard normal law's CDF, erfc(-x / sqrt 2) / 2 (accurate in the left tail,
    erfc being accurate in its right).

    Examples:
        >>> special.ndtr(lm.tensor([0.0]))
        tensor([0.5000])
    """
    return (_tensor(input) * (-1 / math.sqrt(2))).erfc() * 0.5


def ndtri(input: Any) -> Tensor:  # noqa: A002
    """The inverse of ndtr: sqrt 2 * erfinv(2p - 1).

    Examples:
        >>> special.ndtri(lm.tensor([0.5, 0.975]))
        tensor([0.0000, 1.9600])
    """
    return (_tensor(input) * 2 - 1).erfinv() * math.sqrt(2)


def entr(input: Any) -> Tensor:  # noqa: A002
    """-x log x elementwise: 0 at 0, -inf below 0.

    Examples:
        >>> special.entr(lm.tensor([0.5, 0.0, -1.0]))
        tensor([0.3466, 0.0000,   -inf])
    """
    x = _tensor(input)
    safe = where(x > 0, x, 1.0)  # log's operand where the result keeps it
    return where(x > 0, -(safe * safe.log()), where(x == 0, 0.0, -math.inf))


def xlog1py(input: Any, other: Any) -> Tensor:  # noqa: A002
    """x * log1p(y), 0 where x is 0 (NaN where y is NaN), as xlogy is for log.

    Examples:
        >>> special.xlog1py(lm.tensor([0.0, 2.0]), lm.tensor([-1.0, 0.0]))
        tensor([0., 0.])
    """
    x = _tensor(input)
    y = other if isinstance(other, Tensor) else as_tensor(np.asarray(other, x.dtype))
    zero = x == 0
    out = where(zero, 0.0, x * where(zero, 0.0, y).log1p())
    return where(y.isnan(), math.nan, out)


def _same(name: str, example: str, shown: str) -> Any:
    """The special name of a Tensor method (erf, expm1, softmax, ...)."""
    def function(input: Any, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
        return getattr(_tensor(input), name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"`Tensor.{name}`, under torch.special's name.\n\nExamples:\n"
                        f"    >>> special.{name}({example})\n    {shown}")
    return function


erf = _same("erf", "lm.tensor([0.0])", "tensor([0.])")
erfc = _same("erfc", "lm.tensor([0.0])", "tensor([1.])")
erfinv = _same("erfinv", "lm.tensor([0.0])", "tensor([0.])")
exp2 = _same("exp2", "lm.tensor([3.0])", "tensor([8.])")
expm1 = _same("expm1", "lm.tensor([0.0])", "tensor([0.])")
log1p = _same("log1p", "lm.tensor([0.0])", "tensor([0.])")
sinc = _same("sinc", "lm.tensor([0.0])", "tensor([1.])")
round = _same("round", "lm.tensor([2.5])", "tensor([2.])")  # noqa: A001
xlogy = _same("xlogy", "lm.tensor([0.0]), lm.tensor([0.0])", "tensor([0.])")
logsumexp = _same("logsumexp", "lm.zeros(2), 0", "tensor(0.6931)")
softmax = _same("softmax", "lm.zeros(2), 0", "tensor([0.5000, 0.5000])")
log_softmax = _same("log_softmax", "lm.zeros(2), 0", "tensor([-0.6931, -0.6931])")

from lamina.functions.special_more import *  # noqa: E402, F403 - the rest of torch.special
from lamina.functions.special_more import NAMES as _MORE  # noqa: E402

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln",
           "log1p", "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", *_MORE]
