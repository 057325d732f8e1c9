"""The gamma family as Tensor methods: lgamma, digamma, polygamma, mvlgamma and their
in-place forms (lamina/functions/gamma.py computes them)."""

from __future__ import annotations

import math
from typing import Any

from lamina.functions.tensor_methods.inplace import _inplace


class GammaMethods:
    __slots__ = ()

    def lgamma(self) -> Any:
        """log |Gamma(x)|, elementwise; +inf at 0, -1, -2, ... Its gradient is digamma.

        Examples:
            >>> lm.tensor([1.0, 3.0, 0.5]).lgamma()
            tensor([0.0000, 0.6931, 0.5724])
        """
        from lamina.functions.elementwise import unary

        return unary("lgamma", self)

    def digamma(self) -> Any:
        """The logarithmic derivative of Gamma, elementwise; -inf at 0 and NaN at the
        negative integers, as PyTorch's. Its gradient is polygamma(1, x).

        Examples:
            >>> lm.tensor([1.0, 2.0]).digamma()
            tensor([-0.5772,  0.4228])
        """
        from lamina.functions.elementwise import unary

        return unary("digamma", self)

    def polygamma(self, n: int) -> Any:
        """The n-th derivative of digamma (`torch.polygamma(n, x)` is `x.polygamma(n)`).

        Examples:
            >>> lm.tensor([1.0]).polygamma(1)  # pi**2 / 6
            tensor([1.6449])
        """
        from lamina.functions.elementwise import polygamma

        return polygamma(n, self)

    def mvlgamma(self, p: int) -> Any:
        """The log of the multivariate gamma function of dimension p: p(p-1)/4 log(pi) plus
        the sum of lgamma(x - j/2) over j < p. Defined where every x exceeds (p - 1) / 2;
        elsewhere it is that sum all the same, as PyTorch's, which no longer refuses.

        Examples:
            >>> lm.tensor([2.5]).mvlgamma(2)
            tensor([0.8570])
        """
        if isinstance(p, bool) or not isinstance(p, int) or p < 1:
            raise RuntimeError(f"mvlgamma: p must be an integer >= 1; got {p!r}")
        total = sum((self - j / 2).lgamma() for j in range(p))
        return total + p * (p - 1) / 4 * math.log(math.pi)

    lgamma_, digamma_ = _inplace("lgamma"), _inplace("digamma")
    polygamma_, mvlgamma_ = _inplace("polygamma", "1"), _inplace("mvlgamma", "1")
