"""Forward and gradients of every op against PyTorch, float64 to 1e-10 and float32 to 1e-5.

Skipped where PyTorch is absent; `.ci/run` installs torch==2.13.0 so this runs in CI.
"""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES, Case

import lamina as lm

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

TORCH_CASES = [c for c in CASES if c.torch is not None]
TOL = {np.float64: 1e-10, np.float32: 1e-5}


def _outs(y):
    return list(y) if isinstance(y, (tuple, list)) else [y]


def _run_lamina(case, arrays, weights):
    xs = [lm.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    ys = _outs(case.fn(*xs))
    total = sum(((y * lm.tensor(w)).sum() for y, w in zip(ys, weights)), lm.tensor(0.0, dtype=ys[0].dtype))
    total.backward()
    return [y.array for y in ys], [x.grad for x in xs if x.requires_grad]


def _run_torch(case, arrays, weights):
    xs = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    ys = _outs(case.torch(*xs))
    total = sum((y * torch.tensor(w)).sum() for y, w in zip(ys, weights))
    total.backward()
    return [y.detach().numpy() for y in ys], [x.grad.numpy() for x in xs if x.requires_grad]


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("case", TORCH_CASES, ids=lambda c: c.name)
def test_matches_pytorch(case: Case, dtype) -> None:
    torch.set_num_threads(1)
    rng = np.random.default_rng(abs(hash(case.name)) % 2**32)
    arrays = [a.astype(dtype) if a.dtype.kind == "f" else a for a in case.make(rng)]
    want_y = _outs(case.ref(*[a.astype(np.float64) if a.dtype.kind == "f" else a for a in arrays]))
    weights = [rng.standard_normal(np.shape(y)).astype(dtype) for y in want_y]
    ly, lg = _run_lamina(case, arrays, weights)
    ty, tg = _run_torch(case, arrays, weights)
    tol = TOL[dtype]
    for a, b in zip(ly, ty):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, np.abs(b).max(initial=0)))
    assert len(lg) == len(tg)
    for a, b in zip(lg, tg):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * max(1.0, np.abs(b).max(initial=0)))
