"""The fused kernels compiled by numba: one pass over memory each, where NumPy makes one
pass an operation. Imported only by lamina.fused, and only where numba is installed.

Every kernel is serial, takes 1-D contiguous float32 arrays and releases the GIL
(`nogil`), so lamina's own threads run it in pieces (lamina.parallel.pieces), as they run
NumPy's. The machine code is kept on disk (numba_cache.py): the second process pays no
compile time. `fastmath` (as `_jit` sets it) lets LLVM vectorize; the results agree with
the NumPy code paths to float32 rounding, which tests/test_fused.py checks.
"""

from __future__ import annotations

import math

import numpy as np

from lamina.fused.constants import AS_A1, AS_A2, AS_A3, AS_A4, AS_A5, AS_P, INV_SQRT2, INV_SQRT2PI
from lamina.fused.numba_blas_steps import *  # noqa: F403 (one namespace: fused.compiled())
from lamina.fused.numba_cache import jit
from lamina.fused.numba_channels import channel_affine  # noqa: F401 (one namespace)
from lamina.fused.numba_conv_pool import conv_max_pool, conv_max_pool_weight_grad  # noqa: F401
from lamina.fused.numba_energy import (  # noqa: F401 (one namespace)
    cd_statistics,
    gibbs_step,
    hidden_pass,
)
from lamina.fused.numba_layer_norm import layer_norm, layer_norm_backward  # noqa: F401
from lamina.fused.numba_math import exp32
from lamina.fused.numba_math import kernel as _jit
from lamina.fused.numba_pool import (  # noqa: F401 (one namespace: fused.compiled())
    max_of_blocks,
    max_pool_2x2,
    max_pool_2x2_backward,
    scatter_blocks,
)
from lamina.fused.numba_recurrent import (  # noqa: F401 (one namespace: fused.compiled())
    gru_backward_step,
    gru_new_gate,
    gru_preactivate,
    gru_state,
    lstm_backward_step,
    lstm_cell_state,
    lstm_cell_state_gm,
    lstm_preactivate,
    lstm_preactivate_gm,
)
from lamina.fused.numba_rows import rows_product  # noqa: F401 (one namespace)
from lamina.fused.numba_softmax import (  # noqa: F401 (one namespace: fused.compiled())
    log_softmax_rows,
    softmax_backward,
    softmax_rows,
)
from lamina.fused.numba_threaded import (  # noqa: F401 (one namespace: fused.compiled())
    lstm_backward_rows,
    lstm_backward_serial,
    lstm_backward_threaded,
    lstm_forward_rows,
    lstm_forward_serial,
    lstm_forward_threaded,
    share_rows,
    transposed,
    transposed_serial,
)
from lamina.fused.numba_threaded_gru import (  # noqa: F401 (one namespace: fused.compiled())
    gru_backward_rows,
    gru_backward_threaded,
    gru_forward_rows,
    gru_forward_threaded,
)
from lamina.fused.numba_windows import col2im, im2col  # noqa: F401 (one namespace)
from lamina.fused.numba_winograd import (  # noqa: F401 (one namespace: fused.compiled())
    winograd_input,
    winograd_output,
    winograd_output_grad,
)

_exact = jit(nogil=True, error_model="numpy")

_f = np.float32
A1, A2, A3, A4, A5, P = _f(AS_A1), _f(AS_A2), _f(AS_A3), _f(AS_A4), _f(AS_A5), _f(AS_P)
HALF, ONE, R2, R2PI, ZERO = _f(0.5), _f(1.0), _f(INV_SQRT2), _f(INV_SQRT2PI), _f(0.0)


@_jit
def _gelu(v):  # type: ignore[no-untyped-def]
    """(v * Phi(v), its derivative Phi(v) + v * N(v)), N the standard normal density; Phi
    by Abramowitz & Stegun 7.1.26 (see constants), whose exp(-v^2 / 2) is N's too.
    Inlined into the kernels' loops, which it leaves vectorizable."""
    z = abs(v) * R2
    t = ONE / (ONE + P * z)
    e = exp32(-z * z)
    tail = HALF * t * (A1 + t * (A2 + t * (A3 + t * (A4 + t * A5)))) * e
    p = tail if v < 0 else ONE - tail
    return v * p, p + v * R2PI * e


@_jit
def gelu_forward(x, y, d):  # type: ignore[no-untyped-def]
    """y = gelu(x) and its derivative d (see _gelu)."""
    for i in range(x.size):
        y[i], d[i] = _gelu(x[i])


@_jit
def gelu_values(x, y):  # type: ignore[no-untyped-def]
    """y = gelu(x) alone: the eager op keeps x for its backward, not the derivative."""
    for i in range(x.size):
        y[i] = _gelu(x[i])[0]


@_jit
def gelu_grad(x, gy, gx):  # type: ignore[no-untyped-def]
    """gx = gy * gelu'(x), the derivative made again from the input x (see _gelu)."""
    for i in range(x.size):
        gx[i] = gy[i] * _gelu(x[i])[1]


@_jit
def gelu_bias_forward(x, b, y, d):  # type: ignore[no-untyped-def]
    """gelu_forward of x + b, b (N,) added to each row of x (R, N) in the same pass: the
    bias of the linear layer that made x (plan.rewrite_bias)."""
    rows, n = x.shape
    for r in range(rows):
        xr, yr, dr = x[r], y[r], d[r]
        for j in range(n):
            yr[j], dr[j] = _gelu(xr[j] + b[j])


@_exact
def add_bias(x, z, b, out):  # type: ignore[no-untyped-def]
    """out = x + (z + b) over rows (R, N), b (N,) added to each: a residual sum of a linear
    layer's output z and its bias (plan/kernels/bias.py). out may be x or z. Exact IEEE
    operations in that order (no fastmath, which may reassociate the sums): the bits of
    the linear's output plus x."""
    rows, n = x.shape
    for r in range(rows):
        xr, zr, yr = x[r], z[r], out[r]
        for j in range(n):
            yr[j] = xr[j] + (zr[j] + b[j])


@_jit
def heads_bias(x, b, part, out):  # type: ignore[no-untyped-def]
    """out[i, h, t] = x[i, t, part, h] + b[part, h], x (B, T, P, H, D) and b (P, H, D) C-
    contiguous, out (B, H, T, D): one part of a projection cut into attention heads, its
    bias added as it is copied (plan/kernels/heads.py)."""
    nb, nt, _, nh, nd = x.shape
    for i in range(nb):
        for h in range(nh):
            for t in range(nt):
                for j in range(nd):
                    out[i, h, t, j] = x[i, t, part, h, j] + b[part, h, j]


@_jit
def gelu_backward(d, gy, gx):  # type: ignore[no-untyped-def]
    """gx = gy * d, d the derivative gelu_forward gave."""
    for i in range(d.size):
        gx[i] = gy[i] * d[i]


@_jit
def adam(p, g, m, v, c1, b2, c2, step_size, bias2_root, eps, shrink, l2):  # type: ignore[no-untyped-def]
    """One Adam step in place, the scalars float32 (c1 = 1 - b1 and c2 = 1 - b2, rounded
    once from the exact difference, as NumPy's would be): p *= shrink (decoupled decay),
    g + l2 * p (L2 decay), both moments, then
    p -= step_size * m / (sqrt(v) / bias2_root + eps)."""
    for i in range(p.size):
        pi = p[i] * shrink
        gi = g[i] + l2 * pi
        mi = m[i] + c1 * (gi - m[i])
        vi = b2 * v[i] + c2 * gi * gi
        m[i] = mi
        v[i] = vi
        p[i] = pi - step_size * mi / (math.sqrt(vi) / bias2_root + eps)


@_jit
def _moments(x, r):  # type: ignore[no-untyped-def]
    """(mean, biased variance) of row r of x (R, D), summed in float64 and centred first."""
    d = x.shape[1]
    total = 0.0
    for j in range(d):
        total += x[r, j]
    mean = total / d
    sq = 0.0
    for j in range(d):
        c = x[r, j] - mean
        sq += c * c
    return mean, sq / d


@_exact
def sgd(p, g, buf, lr, wd, momentum, keep, nesterov):  # type: ignore[no-untyped-def]
    """One SGD step in place, the scalars float32: d = g + wd * p; with momentum (buf of
    p's size), buf = momentum * buf + keep * d (keep = 1 - dampening) and d = buf, or
    d + momentum * buf with Nesterov; then p -= lr * d. Without momentum, buf is unused.
    Exact IEEE operations in NumPy's order (no fastmath): the same bits as the NumPy
    update, so a parameter updated partly here and partly there is one update."""
    for i in range(p.size):
        d = g[i] + wd * p[i]
        if momentum != 0:
            b = buf[i] * momentum + keep * d
            buf[i] = b
            d = d + momentum * b if nesterov else b
        p[i] -= lr * d


@_jit
def batch_norm(x, gamma, beta, eps, y, mean, var, invstd):  # type: ignore[no-untyped-def]
    """Batch statistics of each channel's row of x (C, M) into mean and var (biased,
    float64) and invstd = 1 / sqrt(var + eps) (float32), and y = xhat * gamma + beta,
    xhat = (x - mean) * invstd with the mean rounded to float32, which batch_norm_backward
    makes again from x: as layer_norm's, a pass bound by its stores."""
    c_, m = x.shape
    for c in range(c_):
        mu, v = _moments(x, c)
        mean[c], var[c] = mu, v
        inv = np.float32(1.0 / math.sqrt(v + eps))
        invstd[c] = inv
        m32, g, b = np.float32(mu), gamma[c], beta[c]
        for j in range(m):
            y[c, j] = (x[c, j] - m32) * inv * g + b


@_jit
def batch_norm_backward(gy, x, mean, invstd, scale, gx, g_xhat, g_sum):  # type: ignore[no-untyped-def]
    """Per channel row (C, M), xhat = (x - mean) * invstd as batch_norm made it (mean in
    float32): g_xhat = sum(gy * xhat) and g_sum = sum(gy) (float64), and gx = scale * (gy
    - g_sum / M - xhat * g_xhat / M), scale = gamma / std per channel."""
    c_, m = gy.shape
    for c in range(c_):
        mu, inv = mean[c], invstd[c]
        sg = 0.0
        sgx = 0.0
        for j in range(m):
            sg += gy[c, j]
            sgx += gy[c, j] * ((x[c, j] - mu) * inv)
        g_xhat[c], g_sum[c] = sgx, sg
        s = scale[c]
        a, b = np.float32(sg / m), np.float32(sgx / m)
        for j in range(m):
            gx[c, j] = s * (gy[c, j] - a - (x[c, j] - mu) * inv * b)


@_jit
def relu(x, y):  # type: ignore[no-untyped-def]
    """y = max(x, 0), NaN kept (as NumPy's clip keeps it)."""
    for i in range(x.size):
        v = x[i]
        y[i] = ZERO if v < ZERO else v


@_jit
def relu_backward(gy, kept, gx):  # type: ignore[no-untyped-def]
    """gx = gy where kept > 0, else 0: kept is the forward's output y, or its mask (which
    a plan keeps where no later op holds y)."""
    for i in range(gy.size):
        gx[i] = gy[i] if kept[i] > 0 else ZERO


@_jit
def scatter_add_rows(ids, rows, out):  # type: ignore[no-untyped-def]
    """out[ids[i]] += rows[i] for each i, in order: an embedding's weight gradient."""
    for i in range(ids.size):
        k = ids[i]
        for j in range(rows.shape[1]):
            out[k, j] += rows[i, j]


@_jit
def add_row(y, b):  # type: ignore[no-untyped-def]
    """y (R, N) += b (N,) on every row: a linear layer's bias, after its GEMM."""
    for r in range(y.shape[0]):
        yr = y[r]
        for j in range(b.size):
            yr[j] += b[j]
