"""What the tests of lamina.fused's threaded and serial recurrences share: the thread
count, a record of which kernels ran, and the layers' runs (the pools' settings are
conftest.py's quiet_pools)."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.fused as fused


def use_threads(parts):
    """Use `parts` threads; skip where numba's pool is not OpenMP (no libgomp here)."""
    lm.set_num_threads(parts)
    fused.set_backend("numba")
    fused.set_backend(None)
    if fused.threaded_parts() == parts:
        run_lstm(np.zeros((2, 1, 3), np.float32), 4, 1)  # starts numba's pool
    if fused.threaded_parts() != parts:
        pytest.skip("numba's thread pool is not OpenMP here")


def record_calls(monkeypatch, names):
    """Record, in the list returned, which of the compiled kernels `names` run."""
    kernels, ran = fused.compiled(), []
    for name in names:
        inner = getattr(kernels, name)
        monkeypatch.setattr(kernels, name, lambda *a, inner=inner, name=name:
                            ran.append(name) or inner(*a))
    return ran


def record_shares(monkeypatch, share, cell):
    """Make the threaded kernels share `share` ("rows" where the batch allows, or "units")
    and record which of cell's ("lstm", "gru") run: returns the list they go into."""
    from lamina.fused import numba_threaded

    if share == "units":
        monkeypatch.setattr(numba_threaded, "ROWS_MAX_WEIGHT_BYTES", -1)
    return record_calls(monkeypatch, [f"{cell}_{way}_{kind}" for way in ("forward", "backward")
                                      for kind in ("rows", "threaded")])


def run_lstm(x, hidden, layers, infer=False):
    lm.manual_seed(5)
    lstm = lm.nn.LSTM(x.shape[-1], hidden, num_layers=layers)
    if infer:
        lstm.eval()
        with lm.no_grad():
            out, (h, c) = lstm(lm.tensor(x))
        return lstm, [out.numpy(), h.numpy(), c.numpy()]
    xl = lm.tensor(x, requires_grad=True)
    out, (h, c) = lstm(xl)
    (out.square().sum() + (h * c).sum()).backward()
    return lstm, [out.detach().numpy(), h.detach().numpy(), c.detach().numpy(),
                  xl.grad.numpy(), *(p.grad.numpy() for p in lstm.parameters())]


def run_gru(x, hidden, layers, bias):
    lm.manual_seed(5)
    gru = lm.nn.GRU(x.shape[-1], hidden, num_layers=layers, bias=bias)
    xl = lm.tensor(x, requires_grad=True)
    out, h = gru(xl)
    (out.square().sum() + (h * h).sum()).backward()
    return gru, [out.detach().numpy(), h.detach().numpy(), xl.grad.numpy(),
                 *(p.grad.numpy() for p in gru.parameters())]
