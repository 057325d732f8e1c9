"""Tensor methods that PyTorch has as ops of their own and lamina builds from others:
addcmul, nan_to_num, nansum, logit, xlogy, logaddexp, hypot, fmax, copysign, ... Each is
a line of existing ops, so its gradient is theirs; where PyTorch defines the gradient at
a point where the formula would not (xlogy at 0, nan_to_num at a NaN), a `where` picks
PyTorch's value, fed a safe operand so the branch not taken gives no NaN."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.functions.tensor_methods.shared import constant, where


class CompositeMethods:
    __slots__ = ()

    def addcmul(self, tensor1: Any, tensor2: Any, *, value: float = 1) -> Any:
        """self + value * tensor1 * tensor2.

        Examples:
            >>> lm.ones(2).addcmul(lm.tensor([1.0, 2.0]), lm.tensor([3.0, 4.0]), value=0.5)
            tensor([2.5000, 5.0000])
        """
        return self + value * tensor1 * tensor2

    def addcdiv(self, tensor1: Any, tensor2: Any, *, value: float = 1) -> Any:
        """self + value * tensor1 / tensor2.

        Examples:
            >>> lm.ones(2).addcdiv(lm.tensor([1.0, 2.0]), lm.tensor([4.0, 4.0]))
            tensor([1.2500, 1.5000])
        """
        return self + value * tensor1 / tensor2

    def clamp_min(self, min: Any) -> Any:  # noqa: A002 - PyTorch's name
        """clamp(min=min).

        Examples:
            >>> lm.tensor([-1.0, 2.0]).clamp_min(0.0)
            tensor([0., 2.])
        """
        return self.clamp(min=min)

    def clamp_max(self, max: Any) -> Any:  # noqa: A002 - PyTorch's name
        """clamp(max=max).

        Examples:
            >>> lm.tensor([-1.0, 2.0]).clamp_max(0.0)
            tensor([-1.,  0.])
        """
        return self.clamp(max=max)

    def nan_to_num(self, nan: float = 0.0, posinf: float | None = None,
                   neginf: float | None = None) -> Any:
        """NaN, +inf and -inf replaced (by 0 and the dtype's largest and smallest finite
        values by default); the gradient passes where the element was finite.

        Examples:
            >>> lm.tensor([float("nan"), 1.0, float("inf")]).nan_to_num(posinf=9.0)
            tensor([0., 1., 9.])
        """
        if self.dtype.kind != "f":
            return self.clone()
        info, a = np.finfo(self.dtype), self.detach().numpy()
        high, low = (info.max if posinf is None else posinf), (info.min if neginf is None
                                                              else neginf)
        fill = np.where(np.isnan(a), nan, np.where(a > 0, high, low)).astype(self.dtype)
        return where(self.isfinite(), self, constant(fill))

    def nansum(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        """sum() with NaNs counted as zero.

        Examples:
            >>> lm.tensor([1.0, float("nan"), 2.0]).nansum()
            tensor(3.)
        """
        return where(self.isnan(), 0.0, self).sum(dim, keepdim, dtype=dtype)

    def nanmean(self, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:
        """mean() over the elements that are not NaN.

        Examples:
            >>> lm.tensor([1.0, float("nan"), 2.0]).nanmean()
            tensor(1.5000)
        """
        counts = (~self.isnan()).sum(dim, keepdim)
        return self.nansum(dim, keepdim, dtype=dtype) / counts

    def logit(self, eps: float | None = None) -> Any:
        """log(p / (1 - p)), p clamped to [eps, 1 - eps] first where eps is given.

        Examples:
            >>> lm.tensor([0.5, 0.75]).logit()
            tensor([0.0000, 1.0986])
        """
        p = self if eps is None else self.clamp(eps, 1 - eps)
        return (p / (1 - p)).log()

    def xlogy(self, other: Any) -> Any:
        """self * log(other), 0 where self is 0 (NaN where other is NaN), as PyTorch's.

        Examples:
            >>> lm.tensor([0.0, 2.0]).xlogy(lm.tensor([0.0, 1.0]))
            tensor([0., 0.])
        """
        other = other if hasattr(other, "isnan") else constant(np.asarray(other, self.dtype))
        zero = self == 0
        safe = where(zero, 1.0, other)  # log(other) where the product keeps it
        out = where(zero, 0.0, self * safe.log())
        return where(other.isnan(), float("nan"), out)

    def logaddexp(self, other: Any) -> Any:
        """log(exp(self) + exp(other)), computed stably.

        Examples:
            >>> lm.tensor([0.0]).logaddexp(lm.tensor([0.0]))
            tensor([0.6931])
        """
        m = self.detach().maximum(other.detach())
        m = where(m.isfinite(), m, 0.0)
        return m + ((self - m).exp() + (other - m).exp()).log()

    def logaddexp2(self, other: Any) -> Any:
        """log2(2**self + 2**other), computed stably.

        Examples:
            >>> lm.tensor([1.0]).logaddexp2(lm.tensor([1.0]))
            tensor([2.])
        """
        ln2 = math.log(2)
        return (self * ln2).logaddexp(other * ln2) / ln2

    def hypot(self, other: Any) -> Any:
        """sqrt(self**2 + other**2).

        Examples:
            >>> lm.tensor([3.0]).hypot(lm.tensor([4.0]))
            tensor([5.])
        """
        return (self * self + other * other).sqrt()

    def deg2rad(self) -> Any:
        """Degrees to radians.

        Examples:
            >>> lm.tensor([180.0]).deg2rad()
            tensor([3.1416])
        """
        return self * (math.pi / 180)

    def rad2deg(self) -> Any:
        """Radians to degrees.

        Examples:
            >>> lm.tensor([1.5707964]).rad2deg()
            tensor([90.])
        """
        return self * (180 / math.pi)

    def sgn(self) -> Any:
        """sign(): the two are the same on real tensors.

        Examples:
            >>> lm.tensor([-2.0, 0.0, 3.0]).sgn()
            tensor([-1.,  0.,  1.])
        """
        return self.sign()

    def positive(self) -> Any:
        """This tensor itself (PyTorch's unary plus); refused on booleans.

        Examples:
            >>> x = lm.ones(2); x.positive() is x
            True
        """
        if self.dtype == np.bool_:
            raise RuntimeError("positive: not supported for bool tensors; use the tensor")
        return self

    def float_power(self, exponent: Any) -> Any:
        """self ** exponent in float64.

        Examples:
            >>> lm.tensor([2]).float_power(3)
            tensor([8.], dtype=lamina.float64)
        """
        other = exponent.double() if hasattr(exponent, "double") else exponent
        return self.double() ** other

    def fmax(self, other: Any) -> Any:
        """The elementwise maximum, taking the number where one side is NaN; ties go to
        self, as PyTorch's gradient does.

        Examples:
            >>> lm.tensor([1.0, float("nan")]).fmax(lm.tensor([float("nan"), 2.0]))
            tensor([1., 2.])
        """
        return where((self >= other) | other.isnan(), self, other)

    def fmin(self, other: Any) -> Any:
        """The elementwise minimum, taking the number where one side is NaN.

        Examples:
            >>> lm.tensor([1.0, float("nan")]).fmin(lm.tensor([0.0, 2.0]))
            tensor([0., 2.])
        """
        return where((self <= other) | other.isnan(), self, other)

    def copysign(self, other: Any) -> Any:
        """|self| with the sign of other (its sign bit: -0.0 counts as negative).

        Examples:
            >>> lm.tensor([1.0, -2.0]).copysign(lm.tensor([-0.0, 3.0]))
            tensor([-1.,  2.])
        """
        if not hasattr(other, "detach"):
            other = constant(np.asarray(other, self.dtype))
        same = constant(np.signbit(self.detach().numpy()) == np.signbit(other.detach().numpy()))
        out = where(same, self, -self)
        # other takes a gradient of zeros, as in PyTorch: a where that never picks it
        return where(constant(np.zeros(other.shape, bool)), other, out)

    def acosh(self) -> Any:
        """The inverse hyperbolic cosine, log(x + sqrt(x**2 - 1)).

        Examples:
            >>> lm.tensor([1.0]).acosh()
            tensor([0.])
        """
        return (self + (self * self - 1).sqrt()).log()

    arccosh = acosh

    def erfc(self) -> Any:
        """1 - erf(x), to its relative accuracy in the right tail.

        Examples:
            >>> lm.tensor([0.0]).erfc()
            tensor([1.])
        """
        from lamina.functions.elementwise import unary

        return unary("erfc", self)

    def dist(self, other: Any, p: float = 2) -> Any:
        """The p-norm of self - other.

        Examples:
            >>> lm.tensor([3.0, 0.0]).dist(lm.tensor([0.0, 4.0]))
            tensor(5.)
        """
        return (self - other).norm(p)

    def inner(self, other: Any) -> Any:
        """The sums of products over the last dims: shape self.shape[:-1] +
        other.shape[:-1] (a number for two vectors).

        Examples:
            >>> lm.tensor([1.0, 2.0]).inner(lm.tensor([[3.0, 4.0]]))
            tensor([11.])
        """
        if self.ndim == 0 or other.ndim == 0:
            return self * other
        k = self.shape[-1]
        flat = self.reshape(-1, k) @ other.reshape(-1, k).t()
        return flat.reshape(*self.shape[:-1], *other.shape[:-1])

    def inverse(self) -> Any:
        """linalg.inv(self).

        Examples:
            >>> lm.tensor([[2.0]]).inverse()
            tensor([[0.5000]])
        """
        from lamina.linalg import inv

        return inv(self)
