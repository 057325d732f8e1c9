"""The fused kernels in NumPy: the fallback where numba is not installed, with the same
signatures and formulas as lamina/fused/numba_kernels.py. Each walks its arrays in chunks
that stay in cache, so its dozen passes an element cost cache bandwidth, not memory's."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.fused.constants import AS_A1, AS_A2, AS_A3, AS_A4, AS_A5, AS_P, INV_SQRT2, INV_SQRT2PI

CHUNK = 1 << 14  # elements: three float32 scratch arrays of this size sit in L2

_f = np.float32
A1, A2, A3, A4, A5, P = _f(AS_A1), _f(AS_A2), _f(AS_A3), _f(AS_A4), _f(AS_A5), _f(AS_P)
HALF, ONE, R2, R2PI = _f(0.5), _f(1.0), _f(INV_SQRT2), _f(INV_SQRT2PI)


def gelu_forward(x: Any, y: Any, d: Any) -> None:
    """y = x * Phi(x) and its derivative d = Phi(x) + x * N(x), N the standard normal
    density; Phi by Abramowitz & Stegun 7.1.26 (see constants), whose exp(-x^2 / 2) is
    N's too."""
    for xs, ps, ns, lo, hi in _phi_chunks(x):
        np.multiply(xs, ps, out=y[lo:hi])
        ns *= xs
        np.add(ps, ns, out=d[lo:hi])


def gelu_values(x: Any, y: Any) -> None:
    """y = x * Phi(x) alone (numba_kernels')."""
    for xs, ps, _, lo, hi in _phi_chunks(x):
        np.multiply(xs, ps, out=y[lo:hi])


def gelu_grad(x: Any, gy: Any, gx: Any) -> None:
    """gx = gy * (Phi(x) + x * N(x)), the derivative made again from x (numba_kernels')."""
    for xs, ps, ns, lo, hi in _phi_chunks(x):
        ns *= xs
        ps += ns
        np.multiply(gy[lo:hi], ps, out=gx[lo:hi])


def _phi_chunks(x: Any) -> Any:
    """(x's chunk, Phi of it, N of it, lo, hi) for each chunk [lo, hi) of a flat x; the
    two scratch arrays are reused from one chunk to the next."""
    z, t, sign = np.empty(CHUNK, x.dtype), np.empty(CHUNK, x.dtype), np.empty(CHUNK, bool)
    p = np.empty(CHUNK, x.dtype)
    for lo in range(0, x.size, CHUNK):
        xs = x[lo:lo + CHUNK]
        n = xs.size
        zs, ts, pos, ps = z[:n], t[:n], sign[:n], p[:n]
        np.abs(xs, out=zs)
        zs *= R2
        np.multiply(zs, P, out=ts)
        ts += ONE
        np.reciprocal(ts, out=ts)
        np.multiply(ts, A5, out=ps)
        for a in (A4, A3, A2, A1):
            ps += a
            ps *= ts
        np.square(zs, out=zs)
        np.negative(zs, out=zs)
        np.exp(zs, out=zs)
        ps *= zs
        ps *= HALF  # erfc(|x| / sqrt 2) / 2: Phi(x) for x < 0, 1 - Phi(x) otherwise
        np.greater_equal(xs, 0, out=pos)
        np.subtract(ONE, ps, out=ps, where=pos)
        zs *= R2PI  # N(x)
        yield xs, ps, zs, lo, lo + n


def gelu_bias_forward(x: Any, b: Any, y: Any, d: Any) -> None:
    """gelu_forward of x + b, b (N,) added to each row of x (R, N)."""
    gelu_forward((x + b).reshape(-1), y.reshape(-1), d.reshape(-1))


def add_bias(x: Any, z: Any, b: Any, out: Any) -> None:
    """out = x + (z + b) over rows (R, N) (numba_kernels')."""
    np.add(x, np.add(z, b), out=out)


def heads_bias(x: Any, b: Any, part: int, out: Any) -> None:
    """out[i, h, t] = x[i, t, part, h] + b[part, h] (numba_kernels')."""
    np.add(x[:, :, part].transpose(0, 2, 1, 3), b[part][None, :, None, :], out=out)


def gelu_backward(d: Any, gy: Any, gx: Any) -> None:
    """gx = gy * d, d the derivative gelu_forward gave."""
    np.multiply(gy, d, out=gx)
