"""The compiled kernel of an RBM's training measures: what CD reports each batch beside its
gradient. Re-exported by numba_kernels, the namespace `lamina.fused.compiled()` returns.

On a small batch (20 samples of 64 units, say) these measures are some thirty NumPy calls
on arrays of a few thousand elements, each costing more in its call than in its work: one
kernel reads the preactivations once and returns three sums.
"""

from __future__ import annotations

import numpy as np

from lamina.fused.numba_math import exp32, kernel, softplus32

ONE, ZERO = np.float32(1.0), np.float32(0.0)


@kernel
def cd_measures(v, pre, pre_k, w, b, idx, back):  # type: ignore[no-untyped-def]
    """(sum over samples of F(v) - F(chain) - dv . b, of softplus(F(v) - F(v flipped)),
    of (v - p(v | h))^2), in float64, from the data v (N, V), the preactivations pre =
    W v + c and pre_k = W v_k + c (N, H), W (H, V), the visible bias b, the unit idx[n]
    flipped in sample n, and back = h W (N, V), h = p(h | v). F(v) = -v . b - sum_j
    softplus(pre_j); the caller adds dv . b, dv the chain's visible sums less the data's."""
    n_, h_ = pre.shape
    col = np.empty(h_, np.float32)  # W's column of the flipped unit, read contiguously
    gap_sum = pseudo = recon = 0.0
    for n in range(n_):
        j = idx[n]
        sign = ONE - np.float32(2.0) * v[n, j]
        for u in range(h_):
            col[u] = w[u, j] * sign
        data, chain, flipped = ZERO, ZERO, ZERO
        pr, pk = pre[n], pre_k[n]
        for u in range(h_):
            data += softplus32(pr[u])
            chain += softplus32(pk[u])
            flipped += softplus32(pr[u] + col[u])
        gap_sum += chain - data
        # gap = F(v flipped) - F(v) = data - flipped - sign * b_j; log s(gap) is
        # -softplus(-gap), summed here as softplus(-gap)
        pseudo += softplus32(flipped - data + sign * b[j])
        vn, bn = v[n], back[n]
        miss = ZERO
        for i in range(vn.size):
            d = vn[i] - ONE / (ONE + exp32(-(bn[i] + b[i])))
            miss += d * d
        recon += miss
    return gap_sum, pseudo, recon
