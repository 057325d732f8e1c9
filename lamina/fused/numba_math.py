"""exp and softplus in float32 for the compiled kernels, in a form LLVM vectorizes.

numba's `math.exp` and `math.tanh` call the C library an element at a time. Without a
vector math library (SVML, which numba uses only where it is installed), a loop that
calls them stays scalar and runs several times slower than NumPy's SIMD ufuncs: the
kernels that needed them had to leave those passes to NumPy. exp32 is straight-line
float32 arithmetic, with selects instead of branches, so a loop that calls it vectorizes
like any other once LLVM has inlined it into the kernel.

Accuracy, checked over the float32 range by tests/test_fused_math.py: within 4e-7 of the
exact value, relative (3 units in the last place; NumPy's float32 exp is within 2e-7),
and subnormal results within 6e-45 (a few of the smallest subnormal). NaN, infinities and
overflow behave as NumPy's. It is compiled into each kernel under that kernel's fastmath
flags, which let LLVM reorder products: 2^n multiplies e^r as one factor wherever the
result is a normal number, so no reordering can overflow an intermediate.

The kernels that inline this file's functions compile again once it is edited: every
kernel's cache is stale when any kernel file changes (numba_cache.kernels_stamp).

softplus32 builds on exp32 with a short series for log(1 + e), 0 < e <= 1, where a
`math.log1p` would again be a libm call an element; within 5e-7 of the exact value,
relative, over the float32 range (the same test).

tanh32 and sigmoid32 build on exp32 too (within 2e-7 and, where sigmoid(x) ~ e^x, 4e-7
of the exact value, relative; the same test). In a serial kernel they did not pay: a
fused LSTM step with them ran slower than NumPy's SIMD tanh between two kernels, whose
vectors are wider than those LLVM gives numba's loops here. They serve the threaded
recurrence (numba_threaded.py), where each thread activates its share of the gates in the
wake of its share of the GEMM.
"""

from __future__ import annotations

import math

import numpy as np

from lamina.fused.numba_cache import jit

# The kernels' flags: fastmath without "nnan" and "ninf", so NaN and infinity behave as in
# NumPy (a softmax's -inf mask, a NaN that max pooling propagates); reassociation still
# vectorizes the sums.
FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}
kernel = jit(nogil=True, fastmath=FASTMATH, error_model="numpy")
# A scalar function the kernels call and LLVM inlines into their loops, with its own
# arithmetic exact (no fastmath): exp32's steps must not be reordered.
scalar = jit(nogil=True, error_model="numpy")

_f = np.float32
LOG2E = _f(1 / math.log(2))
# ln 2 = LN2_HI + LN2_LO, LN2_HI with 16 significant bits: n * LN2_HI is exact for the n
# of every float32 exp, so x - n ln 2 loses nothing to rounding (Cody & Waite).
LN2_HI = _f(0.693145751953125)
LN2_LO = _f(math.log(2) - 0.693145751953125)
# Taylor coefficients of 2 e^r (2 / k!, exact doubles of those of e^r): to r^7, the
# truncation is below 1e-8 for |r| <= ln 2 / 2. The factor 2 lets 2^n be applied as 2^(n-1),
# one factor even at the top of the range, where n is 128.
T0, T1, T2, T3, T4, T5, T6, T7 = (_f(2 / math.factorial(k)) for k in range(8))
HALF = _f(0.5)
EXP_LOW, EXP_HIGH = _f(-104.0), _f(89.0)  # e^x is 0 below, infinite above, in float32


@scalar
def _pow2(k):  # type: ignore[no-untyped-def]
    """2^k for an int32 k in [-126, 127], from its exponent bits (k = 128: infinity)."""
    return np.int32((k + 127) << 23).view(np.float32)


@scalar
def exp32(x):  # type: ignore[no-untyped-def]
    """e^x for a float32 x: 2^n e^r, n the integer nearest x / ln 2, |r| <= ln 2 / 2 (a
    shorter polynomial than 0 <= r < ln 2 needs). Where e^x is subnormal, 2^n is applied
    as two factors, and the product underflows gradually, as IEEE arithmetic does; above
    the float32 range, 2^n is infinite, and so is e^x."""
    xc = min(max(x, EXP_LOW), EXP_HIGH)
    n = np.floor(xc * LOG2E + HALF)
    r = (xc - n * LN2_HI) - n * LN2_LO
    twice = T0 + r * (T1 + r * (T2 + r * (T3 + r * (T4 + r * (T5 + r * (T6 + r * T7))))))
    k = np.int32(n)
    normal = twice * _pow2(np.int32(k - 1))
    subnormal = twice * _pow2(np.int32(k + 63)) * _pow2(np.int32(-64))
    e = normal if k >= -125 else subnormal
    return e if x == x else x  # NaN stays NaN


# log(1 + e) = 2 atanh(s), s = e / (2 + e) <= 1/3 for 0 <= e <= 1: 2 (s + s^3/3 + ... +
# s^15/15), whose truncation is below 1.5e-8 relative (s^2 <= 1/9).
A3, A5, A7, A9, A11, A13, A15 = (_f(1 / k) for k in (3, 5, 7, 9, 11, 13, 15))
ONE, TWO, ZERO = _f(1.0), _f(2.0), _f(0.0)


@scalar
def softplus32(x):  # type: ignore[no-untyped-def]
    """log(1 + e^x) for a float32 x, as max(x, 0) + log(1 + e^-|x|), which never
    overflows; NaN stays NaN, and softplus(-inf) = 0, softplus(inf) = inf."""
    e = exp32(-abs(x))
    s = e / (TWO + e)
    q = s * s
    tail = TWO * s * (ONE + q * (A3 + q * (A5 + q * (A7 + q * (A9 + q * (A11 + q * (
        A13 + q * A15)))))))
    return (x if x > ZERO else ZERO) + tail if x == x else x


# tanh's Taylor series to x^13, for |x| < 1/2, where 1 - 2 / (e^2|x| + 1) would cancel:
# the first term left out, 21844/6081075 x^13... is below 1e-7 of tanh(x) there.
C3, C5, C7, C9, C11, C13 = (_f(c) for c in (
    -1 / 3, 2 / 15, -17 / 315, 62 / 2835, -1382 / 155925, 21844 / 6081075))


@scalar
def tanh32(x):  # type: ignore[no-untyped-def]
    """tanh of a float32 x: an odd polynomial near 0, else 1 - 2 / (e^2|x| + 1) with x's
    sign (tanh(+-inf) = +-1); both are computed and one selected, so a loop vectorizes.
    NaN stays NaN."""
    q = x * x
    near = x + x * q * (C3 + q * (C5 + q * (C7 + q * (C9 + q * (C11 + q * C13)))))
    far = ONE - TWO / (exp32(TWO * abs(x)) + ONE)
    far = far if x >= ZERO else -far
    return near if abs(x) < HALF else far


@scalar
def sigmoid32(x):  # type: ignore[no-untyped-def]
    """1 / (1 + e^-x) for a float32 x: 0 where e^-x overflows (x < -89, where the exact
    value is subnormal), 1 where it underflows."""
    return ONE / (ONE + exp32(-x))
