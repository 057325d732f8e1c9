"""exp in float32 for the compiled kernels, in a form LLVM vectorizes.

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

A tanh and a sigmoid built on it did not pay: a fused LSTM step with them ran slower than
NumPy's SIMD tanh between two kernels, whose vectors are wider than those LLVM gives
numba's loops here.
"""

from __future__ import annotations

import math

import numba
import numpy as np

# The kernels' flags: fastmath without "nnan" and "ninf", so NaN and infinity behave as in
# NumPy (a softmax's -inf mask, a NaN that max pooling propagates); reassociation still
# vectorizes the sums.
kernel = numba.njit(nogil=True, fastmath={"nsz", "arcp", "contract", "afn", "reassoc"},
                    cache=True, error_model="numpy")
_scalar = numba.njit(nogil=True, cache=True, error_model="numpy")

_f = np.float32
LOG2E = _f(1 / math.log(2))
# ln 2 = LN2_HI + LN2_LO, LN2_HI with 16 significant bits: n * LN2_HI is exact for the n
# of every float32 exp, so x - n ln 2 loses nothing to rounding (Cody & Waite).
LN2_HI = _f(0.693145751953125)
LN2_LO = _f(math.log(2) - 0.693145751953125)
# Taylor coefficients of e^r: to r^9, the truncation is below 1e-8 for 0 <= r < ln 2.
E2, E3, E4, E5, E6, E7, E8, E9 = (_f(1 / math.factorial(k)) for k in range(2, 10))
ONE = _f(1.0)
EXP_LOW, EXP_HIGH = _f(-104.0), _f(89.0)  # e^x is 0 below, infinite above, in float32


@_scalar
def _pow2(k):  # type: ignore[no-untyped-def]
    """2^k for an int32 k in [-126, 127], from its exponent bits (k = 128: infinity)."""
    return np.int32((k + 127) << 23).view(np.float32)


@_scalar
def exp32(x):  # type: ignore[no-untyped-def]
    """e^x for a float32 x: 2^n e^r, n = floor(x / ln 2), 0 <= r < ln 2. Where e^x is
    subnormal, 2^n is applied as two factors, and the product underflows gradually, as
    IEEE arithmetic does; above the float32 range, 2^n is infinite, and so is e^x."""
    xc = min(max(x, EXP_LOW), EXP_HIGH)
    n = np.floor(xc * LOG2E)
    r = (xc - n * LN2_HI) - n * LN2_LO
    p = ONE + r * (ONE + r * (E2 + r * (E3 + r * (E4 + r * (E5 + r * (
        E6 + r * (E7 + r * (E8 + r * E9))))))))
    k = np.int32(n)
    normal = p * _pow2(k)
    subnormal = p * _pow2(np.int32(k + 64)) * _pow2(np.int32(-64))
    e = normal if k >= -126 else subnormal
    return e if x == x else x  # NaN stays NaN
