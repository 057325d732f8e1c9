"""clip_grad_norm_ where the norm is not finite, with norm_type as a string, and in
float64: PyTorch's gradients, norms and dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.mark.parametrize("grads, norm_type", [
    ([[np.nan, 1.0], [2.0]], 2.0),  # a NaN norm: every gradient NaN, as PyTorch's
    ([[np.inf, 1.0], [2.0]], 2.0),  # an infinite one: inf * 0 is NaN, the rest 0
    ([[3.0, -4.0], [0.5]], "inf"),  # the max norm, asked for by name
    ([[3.0, -4.0], [0.5]], 1),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grad_norm_gives_pytorchs_gradients_and_norm(grads, norm_type, dtype) -> None:
    results = []
    for lib in (lamina, torch):
        params = [lib.zeros(len(g), dtype=getattr(lib, dtype), requires_grad=True)
                  for g in grads]
        for p, g in zip(params, grads):
            p.grad = lib.tensor(np.array(g, dtype=dtype))
        norm = lib.nn.utils.clip_grad_norm_(params, 1.0, norm_type=norm_type)
        results.append((str(norm.dtype).split(".")[-1], norm.numpy(),
                        [p.grad.numpy() for p in params]))
    (our_dtype, our_norm, ours), (their_dtype, their_norm, theirs) = results
    assert our_dtype == their_dtype
    np.testing.assert_allclose(our_norm, their_norm, rtol=1e-6)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_a_non_finite_norm_is_an_error_where_asked_for() -> None:
    p = lamina.zeros(2, requires_grad=True)
    p.grad = lamina.tensor([np.nan, 1.0])
    with pytest.raises(RuntimeError, match=r"total norm of order 2\.0 of the gradients is "
                       r"nan, so they cannot be clipped; set error_if_nonfinite=False"):
        lamina.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    assert np.isnan(p.grad.numpy()[0]) and p.grad.numpy()[1] == 1.0  # left as it was
