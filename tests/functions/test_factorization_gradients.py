"""The factorizations' gradients against float64 central differences (their values and
gradients against PyTorch's are in tests/torch_lines.py)."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
from lamina.autograd import gradcheck

rng = np.random.default_rng(4)
SQ = rng.standard_normal((3, 3))
TALL = rng.standard_normal((5, 3))
B = rng.standard_normal((3, 2))


def _spd(a):
    return a @ a.mT + lm.eye(3, dtype=a.dtype)


CASES = {
    "cholesky": (lambda a: lm.linalg.cholesky(_spd(a)), [SQ]),
    "cholesky upper": (lambda a: lm.linalg.cholesky(_spd(a), upper=True), [SQ]),
    "eigh": (lambda a: (lambda w, v: v @ (w.exp()[:, None] * v.mT))(*lm.linalg.eigh(a + a.mT)),
             [SQ]),
    "eigvalsh": (lambda a: lm.linalg.eigvalsh(a + a.mT), [SQ]),
    "svd": (lambda a: (lambda u, s, vh: (u * s.exp()) @ vh)(
        *lm.linalg.svd(a, full_matrices=False)), [TALL]),
    "svd wide": (lambda a: (lambda u, s, vh: u.abs().sum() + vh.abs().sum() + s.sum())(
        *lm.linalg.svd(a.mT, full_matrices=False)), [TALL]),
    "qr": (lambda a: (lambda q, r: q.sum() + (r * r).sum())(*lm.linalg.qr(a)), [TALL]),
    "pinv": (lambda a: lm.linalg.pinv(a), [TALL]),
    "pinv wide": (lambda a: lm.linalg.pinv(a.mT), [TALL]),
    "matrix_exp": (lambda a: lm.linalg.matrix_exp(a), [SQ]),
    "solve_triangular": (lambda a, b: lm.linalg.solve_triangular(a.triu() + 3 * lm.eye(3,
                         dtype=a.dtype), b, upper=True), [SQ, B]),
    "solve_triangular right": (lambda a, b: lm.linalg.solve_triangular(
        a + 3 * lm.eye(3, dtype=a.dtype), b.mT, upper=False, left=False,
        unitriangular=True), [SQ, B]),
    "lstsq": (lambda a, b: lm.linalg.lstsq(a, b[:, :1].expand(3, 2).repeat(2, 1)[:5]).solution,
              [TALL, B]),
    "cond": (lambda a: lm.linalg.cond(a), [SQ]),
}


@pytest.mark.parametrize("name", CASES)
def test_gradient_matches_central_differences(name):
    fn, arrays = CASES[name]
    assert gradcheck(fn, [lm.tensor(a.copy()) for a in arrays])


def test_a_wide_qr_or_mode_r_says_it_has_no_gradient():
    a = lm.tensor(TALL.T.copy(), requires_grad=True)
    with pytest.raises(RuntimeError, match="m >= n"):
        lm.linalg.qr(a).R.sum().backward()
    with pytest.raises(RuntimeError, match="mode='r'"):
        lm.linalg.qr(a.mT, mode="r").R.sum().backward()
