"""The compiled kernels of an RBM's CD step: its units' activations and samples, and the
measures CD reports each batch beside its gradient. Re-exported by numba_kernels, the
namespace `lamina.fused.compiled()` returns.

On a small batch (20 samples of 64 units, say) each of these is several NumPy calls on
arrays of a few thousand elements, each call costing more than its work: a sigmoid with
its bias is four (NumPy's tanh form), a sample two. A kernel reads its inputs once.
The random numbers stay NumPy's, drawn by the caller, so both backends see the same ones.
"""

from __future__ import annotations

import numpy as np

from lamina.fused.numba_math import exp32, kernel, sigmoid32, softplus32

ONE, ZERO = np.float32(1.0), np.float32(0.0)


@kernel
def sigmoid_bias(pre, bias, p):  # type: ignore[no-untyped-def]
    """pre += bias (a row's worth, added to every row) in place, and p = sigmoid(pre): the
    preactivations W v + c and p(h | v) from v W^T, in one pass."""
    rows, cols = pre.shape
    for i in range(rows):
        for j in range(cols):
            z = pre[i, j] + bias[j]
            pre[i, j] = z
            p[i, j] = sigmoid32(z)


@kernel
def bernoulli(p, u, out):  # type: ignore[no-untyped-def]
    """out = 1 where u < p, else 0: units on with probabilities p, from uniforms u."""
    rows, cols = p.shape
    for i in range(rows):
        for j in range(cols):
            out[i, j] = ONE if u[i, j] < p[i, j] else ZERO


@kernel
def bernoulli_sigmoid_bias(pre, bias, u, out):  # type: ignore[no-untyped-def]
    """out = 1 where u < sigmoid(pre + bias), else 0 (out may be pre): a sample of units
    whose probabilities the caller does not keep."""
    rows, cols = pre.shape
    for i in range(rows):
        for j in range(cols):
            out[i, j] = ONE if u[i, j] < sigmoid32(pre[i, j] + bias[j]) else ZERO


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
