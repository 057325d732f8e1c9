"""Anomaly detection: a NaN in backward stops it naming the op, as PyTorch's message does,
and a warning points at the forward line that called the op."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm


def _nan_backward(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = (x.sqrt() * 0).sum()  # the forward line the warning must show
    y.backward()


def test_a_nan_gradient_names_the_op_and_its_forward_line():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        block = lm.autograd.detect_anomaly()
    nan_error = r"^Function 'SqrtBackward' returned nan values in its 0th output\.$"
    with pytest.warns(UserWarning) as caught, block, np.errstate(all="ignore"), \
            pytest.raises(RuntimeError, match=nan_error):
        _nan_backward(lm)
    traces = [str(w.message) for w in caught if "Error detected in SqrtBackward" in str(w.message)]
    assert len(traces) == 1 and "test_anomaly.py" in traces[0]
    assert "x.sqrt() * 0" in traces[0]
    assert not lm.is_anomaly_enabled()


def test_pytorch_raises_the_same_error_on_the_same_line():
    torch = pytest.importorskip("torch")
    nan_error = r"Function 'SqrtBackward0' returned nan values in its 0th output\."
    with pytest.warns(UserWarning), torch.autograd.detect_anomaly(), \
            pytest.raises(RuntimeError, match=nan_error):
        _nan_backward(torch)


def test_without_it_or_without_check_nan_backward_runs_through():
    with np.errstate(all="ignore"):
        _nan_backward(lm)
        with pytest.warns(UserWarning), lm.autograd.detect_anomaly(check_nan=False):
            _nan_backward(lm)


def test_an_error_inside_a_backward_shows_the_forward_line_and_is_raised_unchanged():
    class Broken(lm.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    x = lm.tensor([1.0], requires_grad=True)
    lm.set_anomaly_enabled(True)
    try:
        y = Broken.apply(x).sum()
        with pytest.warns(UserWarning, match="Error detected in"), \
                pytest.raises(ValueError, match="broken backward"):
            y.backward()
    finally:
        lm.set_anomaly_enabled(False)


def test_set_detect_anomaly_sets_at_once_and_a_with_block_restores():
    with lm.autograd.set_detect_anomaly(True, check_nan=False):
        assert lm.is_anomaly_enabled() and not lm.is_anomaly_check_nan_enabled()
    assert not lm.is_anomaly_enabled() and lm.is_anomaly_check_nan_enabled()
    lm.autograd.set_detect_anomaly(True)
    try:
        assert lm.is_anomaly_enabled()
    finally:
        lm.autograd.set_detect_anomaly(False)
    assert not lm.is_anomaly_enabled()
