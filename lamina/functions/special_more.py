"""The rest of torch.special, re-exported by lamina.special: modified Bessel functions of
the first kind, erfcx and log_ndtr, the incomplete gamma functions, Hurwitz zeta, the
orthogonal polynomials, and (from SciPy, which computes them, where it is installed) the
Bessel functions of the second kind, J, Y and Airy's Ai. Each takes and gives tensors;
the gradients are PyTorch's where it has them (none for the polynomials, zeta, and the
SciPy-backed ones)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.functions import bessel
from lamina.functions.elementwise import unary
from lamina.functions.error_functions import scipy_special
from lamina.functions.incomplete_gamma import IncompleteGamma, zeta_array
from lamina.functions.operands import constant_op, floating, operands
from lamina.functions.orthopoly import polynomial


def _t(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else as_tensor(x)


def _bessel_i(order: int, scaled: bool, name: str, shown: str) -> Any:
    def function(input: Any) -> Tensor:  # noqa: A002 - PyTorch's name
        return bessel.bessel_i_op(_t(input), order, scaled)
    function.__name__ = function.__qualname__ = name
    kind = "exponentially scaled, e^-|x| I" if scaled else "I"
    function.__doc__ = (f"The modified Bessel function of the first kind, {kind}{order}(x).\n\n"
                        f"Examples:\n    >>> special.{name}(lm.tensor([0.0, 1.0]))\n"
                        f"    {shown}")
    return function


i0 = modified_bessel_i0 = _bessel_i(0, False, "i0", "tensor([1.0000, 1.2661])")
i1 = modified_bessel_i1 = _bessel_i(1, False, "i1", "tensor([0.0000, 0.5652])")
i0e = _bessel_i(0, True, "i0e", "tensor([1.0000, 0.4658])")
i1e = _bessel_i(1, True, "i1e", "tensor([0.0000, 0.2079])")


def spherical_bessel_j0(input: Any) -> Tensor:  # noqa: A002
    """sin(x) / x, 1 at 0.

    Examples:
        >>> special.spherical_bessel_j0(lm.tensor([0.0, 3.0]))
        tensor([1.0000, 0.0470])
    """
    return bessel.SphericalBesselJ0().apply(floating(_t(input)))


def erfcx(input: Any) -> Tensor:  # noqa: A002
    """The scaled complementary error function e^(x^2) erfc(x), finite far in the tail.

    Examples:
        >>> special.erfcx(lm.tensor([0.0, 30.0]))
        tensor([1.0000, 0.0188])
    """
    return unary("erfcx", floating(_t(input)))


def log_ndtr(input: Any) -> Tensor:  # noqa: A002
    """log of the standard normal CDF, finite far in the left tail.

    Examples:
        >>> special.log_ndtr(lm.tensor([0.0, -5.0]))
        tensor([ -0.6931, -15.0650])
    """
    return unary("log_ndtr", floating(_t(input)))


def _incomplete(upper: bool, a: Any, x: Any) -> Tensor:
    a, x = operands(floating(_t(a)), x)
    return IncompleteGamma(upper).apply(a, x)


def gammainc(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The regularised lower incomplete gamma function P(a, x) (differentiable in x).

    Examples:
        >>> special.gammainc(lm.tensor([1.0]), lm.tensor([1.0]))
        tensor([0.6321])
    """
    return _incomplete(False, input, other)


def gammaincc(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    Examples:
        >>> special.gammaincc(lm.tensor([1.0]), lm.tensor([1.0]))
        tensor([0.3679])
    """
    return _incomplete(True, input, other)


def zeta(input: Any, other: Any) -> Tensor:  # noqa: A002
    """The Hurwitz zeta function sum_k (k + q)^-s (s = input, q = other).

    Examples:
        >>> special.zeta(lm.tensor([2.0]), lm.tensor([1.0]))
        tensor([1.6449])
    """
    s, q = operands(floating(_t(input)), other)
    return constant_op(lambda a, b: zeta_array(a, b).astype(a.dtype), s, q)


def _polynomial(kind: str, shifted: bool, name: str, shown: str) -> Any:
    def function(input: Any, n: Any) -> Tensor:  # noqa: A002
        return polynomial(kind, _t(input), n, shifted)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"The {'shifted ' if shifted else ''}{kind.replace('_', ' ')} "
                        f"polynomial of degree n (0 where n < 0).\n\nExamples:\n"
                        f"    >>> special.{name}(lm.tensor([0.5]), 3)\n    {shown}")
    return function


chebyshev_polynomial_t = _polynomial("chebyshev_t", False, "chebyshev_polynomial_t",
                                     "tensor([-1.])")
chebyshev_polynomial_u = _polynomial("chebyshev_u", False, "chebyshev_polynomial_u",
                                     "tensor([-1.])")
chebyshev_polynomial_v = _polynomial("chebyshev_v", False, "chebyshev_polynomial_v",
                                     "tensor([-1.])")
chebyshev_polynomial_w = _polynomial("chebyshev_w", False, "chebyshev_polynomial_w",
                                     "tensor([-1.])")
shifted_chebyshev_polynomial_t = _polynomial("chebyshev_t", True,
                                             "shifted_chebyshev_polynomial_t", "tensor([-0.])")
shifted_chebyshev_polynomial_u = _polynomial("chebyshev_u", True,
                                             "shifted_chebyshev_polynomial_u", "tensor([-0.])")
shifted_chebyshev_polynomial_v = _polynomial("chebyshev_v", True,
                                             "shifted_chebyshev_polynomial_v", "tensor([1.])")
shifted_chebyshev_polynomial_w = _polynomial("chebyshev_w", True,
                                             "shifted_chebyshev_polynomial_w",
                                             "tensor([-1.])")
hermite_polynomial_h = _polynomial("hermite_h", False, "hermite_polynomial_h",
                                   "tensor([-5.])")
hermite_polynomial_he = _polynomial("hermite_he", False, "hermite_polynomial_he",
                                    "tensor([-1.3750])")
laguerre_polynomial_l = _polynomial("laguerre_l", False, "laguerre_polynomial_l",
                                    "tensor([-0.1458])")
legendre_polynomial_p = _polynomial("legendre_p", False, "legendre_polynomial_p",
                                    "tensor([-0.4375])")


def _with_scipy(name: str, compute: Any, input: Any) -> Tensor:  # noqa: A002
    """compute(scipy.special, array) of input, as a tensor without a gradient; where SciPy
    is not installed, an error that says so."""
    sp = scipy_special()
    if sp is None:
        raise NotImplementedError(f"special.{name}: lamina computes it with SciPy, which is "
                                  f"not installed (pip install scipy)")
    return constant_op(lambda a: np.asarray(compute(sp, a)).astype(a.dtype),
                       floating(_t(input)))


def _from_scipy(name: str, scipy_name: str, shown: str) -> Any:
    def function(input: Any) -> Tensor:  # noqa: A002
        return _with_scipy(name, lambda sp, a: getattr(sp, scipy_name)(a), input)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"SciPy's `{scipy_name}` under torch.special's name (no gradient, as "
                        f"in PyTorch).\n\nExamples:\n    >>> special.{name}(lm.tensor([1.0]))"
                        f"\n    {shown}")
    return function


bessel_j0 = _from_scipy("bessel_j0", "j0", "tensor([0.7652])")
bessel_j1 = _from_scipy("bessel_j1", "j1", "tensor([0.4401])")
bessel_y0 = _from_scipy("bessel_y0", "y0", "tensor([0.0883])")
bessel_y1 = _from_scipy("bessel_y1", "y1", "tensor([-0.7812])")
modified_bessel_k0 = _from_scipy("modified_bessel_k0", "k0", "tensor([0.4210])")
modified_bessel_k1 = _from_scipy("modified_bessel_k1", "k1", "tensor([0.6019])")
scaled_modified_bessel_k0 = _from_scipy("scaled_modified_bessel_k0", "k0e",
                                        "tensor([1.1445])")
scaled_modified_bessel_k1 = _from_scipy("scaled_modified_bessel_k1", "k1e",
                                        "tensor([1.6362])")


def airy_ai(input: Any) -> Tensor:  # noqa: A002
    """Airy's Ai(x), from SciPy (no gradient, as in PyTorch).

    Examples:
        >>> special.airy_ai(lm.tensor([0.0]))
        tensor([0.3550])
    """
    return _with_scipy("airy_ai", lambda sp, a: sp.airy(a)[0], input)


NAMES = __all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
         "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "erfcx", "gammainc", "gammaincc", "hermite_polynomial_h",
         "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
         "legendre_polynomial_p", "log_ndtr", "modified_bessel_i0", "modified_bessel_i1",
         "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
         "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "spherical_bessel_j0", "zeta"]
