"""The compiled kernels of an RBM's CD step: its products, its units' activations and
samples, its gradients, and the measures CD reports each batch beside them. Re-exported
by numba_kernels, the namespace `lamina.fused.compiled()` returns.

On a small batch (20 samples of 64 units, say) each product is a few hundred thousand
multiply-adds and each array a few thousand elements, so every NumPy call (a CD-1 step
in NumPy is some thirty) costs more than its work. Here the step is four kernels (hidden
units from the data, one Gibbs step, hidden units from the chain, gradients with
measures), each reading its inputs once. The products run in the kernels' own loops, on
one thread, summed in another order than BLAS's: the same values to float32 rounding.
nn.RBM takes this path only for batches small enough that BLAS's threads would not win.
The random numbers stay NumPy's, drawn by the caller, so both backends see the same ones.
"""

from __future__ import annotations

import numpy as np

from lamina.fused.numba_math import kernel, sigmoid32, softplus32

ONE, ZERO = np.float32(1.0), np.float32(0.0)


@kernel
def hidden_pass(v, w, c, pre, p):  # type: ignore[no-untyped-def]
    """pre = v W^T + c and p = sigmoid(pre), from v (N, V), W (H, V) and the hidden bias c:
    the preactivations and p(h | v)."""
    rows, hidden = pre.shape
    for n in range(rows):
        row_dots(v[n], w, pre[n])
        for u in range(hidden):
            z = pre[n, u] + c[u]
            pre[n, u] = z
            p[n, u] = sigmoid32(z)


@kernel
def row_dots(x, w, out):  # type: ignore[no-untyped-def]
    """out = W x for W (H, V): four of W's rows at a time, so that each element of x
    loaded serves four sums (one sum at a time, the loop is bound by its loads)."""
    hidden, size = w.shape
    u = 0
    while u + 4 <= hidden:
        w0, w1, w2, w3 = w[u], w[u + 1], w[u + 2], w[u + 3]
        a0 = a1 = a2 = a3 = ZERO
        for j in range(size):
            e = x[j]
            a0 += e * w0[j]
            a1 += e * w1[j]
            a2 += e * w2[j]
            a3 += e * w3[j]
        out[u], out[u + 1], out[u + 2], out[u + 3] = a0, a1, a2, a3
        u += 4
    for r in range(u, hidden):
        acc = ZERO
        wr = w[r]
        for j in range(size):
            acc += x[j] * wr[j]
        out[r] = acc


@kernel
def rows_sum(h, w, out):  # type: ignore[no-untyped-def]
    """out = h W for one sample's hidden units h (H) and W (H, V): W's rows weighted,
    four at a time, so that each pass over out serves four of them."""
    hidden, size = w.shape
    out[:] = ZERO
    u = 0
    while u + 4 <= hidden:
        a0, a1, a2, a3 = h[u], h[u + 1], h[u + 2], h[u + 3]
        w0, w1, w2, w3 = w[u], w[u + 1], w[u + 2], w[u + 3]
        for j in range(size):
            out[j] += a0 * w0[j] + a1 * w1[j] + a2 * w2[j] + a3 * w3[j]
        u += 4
    for r in range(u, hidden):
        a, wr = h[r], w[r]
        for j in range(size):
            out[j] += a * wr[j]


@kernel
def gibbs_step(p, u_h, w, b, u_v, v):  # type: ignore[no-untyped-def]
    """One step h -> v of block Gibbs sampling: h = 1 where u_h < p (p(h | .), (N, H)),
    then v = 1 where u_v < sigmoid(h W + b), else 0, written into v (N, V); neither h nor
    p(v | h) is kept."""
    rows, hidden = p.shape
    h = np.empty(hidden, np.float32)
    back = np.empty(w.shape[1], np.float32)
    for n in range(rows):
        for u in range(hidden):
            h[u] = ONE if u_h[n, u] < p[n, u] else ZERO
        rows_sum(h, w, back)
        for j in range(back.size):
            v[n, j] = ONE if u_v[n, j] < sigmoid32(back[j] + b[j]) else ZERO


@kernel
def weight_grad(v, vk, h, h_k, scale, g_w):  # type: ignore[no-untyped-def]
    """g_w = scale * (h_k^T vk - h^T v), for (N, V) and (N, H) operands: two samples at a
    time, so that each pass over a row of g_w serves both."""
    rows, hidden = h.shape
    size = v.shape[1]
    g_w[:] = ZERO
    n = 0
    while n + 2 <= rows:
        vk0, vk1, v0, v1 = vk[n], vk[n + 1], v[n], v[n + 1]
        for u in range(hidden):
            a0, a1 = h_k[n, u] * scale, h_k[n + 1, u] * scale
            d0, d1 = h[n, u] * scale, h[n + 1, u] * scale
            gu = g_w[u]
            for j in range(size):
                gu[j] += a0 * vk0[j] + a1 * vk1[j] - d0 * v0[j] - d1 * v1[j]
        n += 2
    if n < rows:
        vkn, vn = vk[n], v[n]
        for u in range(hidden):
            a, d = h_k[n, u] * scale, h[n, u] * scale
            gu = g_w[u]
            for j in range(size):
                gu[j] += a * vkn[j] - d * vn[j]


@kernel
def cd_statistics(  # type: ignore[no-untyped-def]
        v, vk, h, h_k, pre, pre_k, w, b, idx, g_w, g_b, g_c):
    """CD's gradients, written into g_w (H, V), g_b (V) and g_c (H): statistics(chain) -
    statistics(v), each a mean over the batch; and its measures, in float64: (sum over
    samples of F(v) - F(chain), of softplus(F(v) - F(v flipped)), of (v - p(v | h))^2).

    v, vk: the data and the chain's sample (N, V); h, h_k: p(h | v) and p(h | vk) (N, H);
    pre, pre_k: their preactivations W v + c and W vk + c; W (H, V); b the visible bias;
    idx[n] the unit flipped in sample n. F(v) = -v . b - sum_j softplus(pre_j)."""
    rows, hidden = pre.shape
    visible = v.shape[1]
    scale = ONE / np.float32(rows)
    weight_grad(v, vk, h, h_k, scale, g_w)
    g_c[:] = ZERO
    g_b[:] = ZERO
    col = np.empty(hidden, np.float32)  # W's column of the flipped unit, read contiguously
    back = np.empty(visible, np.float32)  # h W for one sample: p(v | h)'s preactivations
    gap_sum = pseudo = recon = 0.0
    for n in range(rows):
        vn, vkn, hn, pr, pk = v[n], vk[n], h[n], pre[n], pre_k[n]
        j = idx[n]
        sign = ONE - np.float32(2.0) * vn[j]
        data, chain, flipped = ZERO, ZERO, ZERO
        for u in range(hidden):
            g_c[u] += (h_k[n, u] - hn[u]) * scale
            col[u] = w[u, j] * sign
        for u in range(hidden):
            data += softplus32(pr[u])
            chain += softplus32(pk[u])
            flipped += softplus32(pr[u] + col[u])
        rows_sum(hn, w, back)
        dv, miss = ZERO, ZERO
        for i in range(visible):
            g_b[i] += (vkn[i] - vn[i]) * scale
            dv += (vkn[i] - vn[i]) * b[i]
            e = vn[i] - sigmoid32(back[i] + b[i])
            miss += e * e
        # F(v) - F(chain) = (vk - v) . b + chain - data
        gap_sum += dv + chain - data
        # gap = F(v flipped) - F(v) = data - flipped - sign * b_j; log s(gap) is
        # -softplus(-gap), summed here as softplus(-gap)
        pseudo += softplus32(flipped - data + sign * b[j])
        recon += miss
    return gap_sum, pseudo, recon
