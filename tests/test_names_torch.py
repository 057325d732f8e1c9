"""Small PyTorch names scripts reach for, against PyTorch's: amp's custom_fwd/custom_bwd
on a custom Function, OutOfMemoryError, autograd.Variable, nn.utils.clip_grad_norm,
rnn.invert_permutation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")


def _scaled_square(lib):
    class ScaledSquare(lib.autograd.Function):
        @staticmethod
        @lib.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * 3

        @staticmethod
        @lib.amp.custom_bwd(device_type="cpu")
        def backward(ctx, gy):
            (x,) = ctx.saved_tensors
            return gy * 6 * x

    return ScaledSquare


def test_a_custom_function_decorated_for_amp_runs_as_pytorchs():
    values = np.array([0.5, -2.0, 3.0])
    grads = []
    for lib in (torch, lm):
        x = lib.tensor(values, requires_grad=True)
        _scaled_square(lib).apply(x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])
    assert lm.amp.is_autocast_available("cpu") and torch.amp.is_autocast_available("cpu")
    with pytest.raises(TypeError):  # device_type is required, as in PyTorch
        lm.amp.custom_fwd(abs)


def test_out_of_memory_error_is_the_runtime_error_pytorchs_scripts_catch():
    for lib in (torch, lm):
        assert issubclass(lib.cuda.OutOfMemoryError, RuntimeError)
        assert lib.OutOfMemoryError is lib.cuda.OutOfMemoryError
    try:
        raise lm.cuda.OutOfMemoryError("out of memory")
    except lm.cuda.OutOfMemoryError as e:
        assert "memory" in str(e)


def test_variable_makes_a_tensor_as_pytorchs():
    for lib in (torch, lm):
        v = lib.autograd.Variable(lib.ones(2), requires_grad=True)
        assert isinstance(v, lib.Tensor) and v.requires_grad and v.is_leaf


def test_clip_grad_norm_is_clip_grad_norm_with_a_future_warning():
    norms = []
    for lib in (torch, lm):
        layer = lib.nn.Linear(3, 2)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(np.arange(6.0).reshape(2, 3)))
            layer.bias.zero_()
        layer(lib.ones(4, 3)).pow(2).sum().backward()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            norms.append(float(lib.nn.utils.clip_grad_norm(layer.parameters(), 1.0)))
        assert any(issubclass(w.category, FutureWarning) for w in seen)
        assert float(sum(p.grad.pow(2).sum() for p in layer.parameters())) ** 0.5 < 1.0001
    assert norms[1] == pytest.approx(norms[0], rel=1e-6)


def test_invert_permutation_is_pytorchs():
    perm = [3, 0, 2, 1]
    ours = lm.nn.utils.rnn.invert_permutation(lm.tensor(perm))
    theirs = torch.nn.utils.rnn.invert_permutation(torch.tensor(perm))
    assert ours.tolist() == theirs.tolist()
    assert lm.nn.utils.rnn.invert_permutation(None) is None


def test_the_determinism_and_warning_switches_answer_as_pytorchs():
    answers = []
    for lib in (torch, lm):
        seen = []
        for mode in ("warn", 2, "default"):
            lib.set_deterministic_debug_mode(mode)
            seen.append((lib.get_deterministic_debug_mode(),
                         lib.are_deterministic_algorithms_enabled(),
                         lib.is_deterministic_algorithms_warn_only_enabled()))
        with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
            lib.set_deterministic_debug_mode("sometimes")
        lib.set_warn_always(True)
        seen.append(lib.is_warn_always_enabled())
        lib.set_warn_always(False)
        seen.append(lib.is_warn_always_enabled())
        seen.append(lib.pi == np.pi and lib.e == np.e and lib.inf == np.inf)
        seen.append(isinstance(lib.float32, lib.dtype) and lib.newaxis is None)
        answers.append(seen)
    assert answers[1] == answers[0]
    assert lm.set_flush_denormal(True) is False  # NumPy cannot; PyTorch's CPU can
