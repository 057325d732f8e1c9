"""The classical orthogonal polynomials of torch.special (Chebyshev of the four kinds and
their shifted forms, Hermite, Laguerre, Legendre), each of degree n (a tensor or a
number, per element; 0 where n < 0, as PyTorch's) by its three-term recurrence. Without
a gradient, as in PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes, promotion
from lamina.autograd.tensor import Tensor
from lamina.functions.operands import cast, constant_op


def _chebyshev_step(x: Any, k: int, p: Any, q: Any) -> Any:
    return 2 * x * p - q


# kind -> (p1 from x, the recurrence p_(k+1) from x, k, p_k and p_(k-1))
KINDS = {
    "chebyshev_t": (lambda x: x, _chebyshev_step),
    "chebyshev_u": (lambda x: 2 * x, _chebyshev_step),
    "chebyshev_v": (lambda x: 2 * x - 1, _chebyshev_step),
    "chebyshev_w": (lambda x: 2 * x + 1, _chebyshev_step),
    "hermite_h": (lambda x: 2 * x, lambda x, k, p, q: 2 * x * p - 2 * k * q),
    "hermite_he": (lambda x: x, lambda x, k, p, q: x * p - k * q),
    "laguerre_l": (lambda x: 1 - x, lambda x, k, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1)),
    "legendre_p": (lambda x: x, lambda x, k, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1)),
}


def polynomial_array(kind: str, x: Any, n: Any) -> np.ndarray:
    """The polynomial `kind` of degree n at x (arrays that broadcast), in float64."""
    first, step = KINDS[kind]
    x, n = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(n))
    n = np.trunc(n).astype(np.int64)
    out = np.zeros(x.shape)
    out[n == 0] = 1.0
    top = int(n.max(initial=0))
    if top < 1:
        return out
    q, p = np.ones_like(x), first(x)
    out[n == 1] = p[n == 1]
    for k in range(1, top):
        q, p = p, step(x, k, p, q)
        out[n == k + 1] = p[n == k + 1]
    return out


def polynomial(kind: str, x: Any, n: Any, shifted: bool = False) -> Tensor:
    """The polynomial `kind` (a key of KINDS) of degree n at x, or at 2x - 1 when
    `shifted`: a tensor of x's and n's promoted float dtype."""
    x = x if isinstance(x, Tensor) else Tensor(np.asarray(x))
    n = n if isinstance(n, Tensor) else Tensor(np.asarray(n))
    d = promotion.result_type(x, n)
    d = d if np.dtype(d).kind == "f" else dtypes.get_default_dtype()
    x = cast(x, d)
    return constant_op(lambda a, b: polynomial_array(kind, 2 * a - 1 if shifted else a, b)
                       .astype(d), x, n)
