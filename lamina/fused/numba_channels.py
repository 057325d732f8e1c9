"""A per-channel map over a convolution's channel-major output in one pass: an eval-mode
batch norm (x * scale + shift from the running statistics) and a ReLU, what an inference
plan's ConvBatchNorm runs (lamina/plan/kernels/conv_norm.py); the norm alone is
eval-mode BatchNorm's forward without gradients (lamina/functions/normalization.py).

Apart, the norm's scale and shift are half a dozen NumPy calls on (C,) arrays and its
map two passes over the output, the ReLU another: at batch 1 the calls' fixed costs are
most of a layer's time beside its product. Each step here is the float32 operation
NumPy's path makes, in its order and without fastmath, so the results are eager mode's
bit for bit.
"""

from __future__ import annotations

import numpy as np

from lamina.fused.numba_cache import jit

_exact = jit(nogil=True, error_model="numpy")
ONE, ZERO = np.float32(1.0), np.float32(0.0)


@_exact
def channel_affine(x, y, mean, var, gamma, beta, eps, relu):  # type: ignore[no-untyped-def]
    """y = x * scale + shift for x and y (C, L) (y may be x), then max(y, 0) (NaN kept)
    where `relu`, with scale = gamma / sqrt(var + eps) and shift = beta - mean * scale per
    channel. gamma and beta may be empty: ones and zeros."""
    e = np.float32(eps)
    for c in range(y.shape[0]):
        scale = ONE / np.sqrt(var[c] + e)
        if gamma.size:
            scale = scale * gamma[c]
        shift = -(mean[c] * scale)
        if beta.size:
            shift = shift + beta[c]
        xc, yc = x[c], y[c]
        for i in range(xc.size):
            v = xc[i] * scale + shift
            if relu and v < ZERO:
                v = ZERO
            yc[i] = v
