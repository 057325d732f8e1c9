"""lamina.fused's threaded GRU steps (numba_threaded_gru.py): where they run, and that
they give what the NumPy path and PyTorch give."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch
from threaded_cases import record_shares, run_gru, use_threads

import lamina.fused as fused

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")


@pytest.mark.parametrize("share", ["rows", "units"])
@pytest.mark.parametrize("parts", [2, 3])
@pytest.mark.parametrize("shape, hidden, layers, bias", [
    ((9, 5, 7), 24, 1, True),
    ((6, 4, 3), 10, 2, False),
    ((5, 1, 6), 2, 1, True),
])
def test_threaded_gru_steps_agree_with_the_numpy_path_and_pytorch(quiet_pools, monkeypatch,
                                                                  share, parts, shape,
                                                                  hidden, layers, bias):
    x = np.random.default_rng(9).standard_normal(shape).astype(np.float32)
    use_threads(parts)
    ran = record_shares(monkeypatch, share, "gru")
    gru, threaded = run_gru(x, hidden, layers, bias)
    kind = "rows" if share == "rows" and shape[1] >= parts else "threaded"
    assert ran == [f"gru_forward_{kind}"] * layers + [f"gru_backward_{kind}"] * layers
    fused.set_backend("numpy")
    try:
        _, numpy_out = run_gru(x, hidden, layers, bias)
    finally:
        fused.set_backend(None)
    for a, b in zip(threaded, numpy_out, strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6)
    ref = torch.nn.GRU(shape[-1], hidden, num_layers=layers, bias=bias)
    ref.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in gru.state_dict().items()})
    xt = torch.from_numpy(x).requires_grad_()
    out, h = ref(xt)
    (out.square().sum() + (h * h).sum()).backward()
    want = [out, h, xt.grad, *(p.grad for p in ref.parameters())]
    for a, b in zip(threaded, want, strict=True):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-4, atol=1e-5)
