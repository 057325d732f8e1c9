"""The plan's kernels against the ops they stand for: on every op case that records an op
with a kernel, the kernel (each of its variants) gives the op's outputs and gradients, and
declares what it keeps; buffers receive the results."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from op_cases import CASES, Case
from op_graph import inputs_kept_whole, recorded_ops, undeclared
from op_table import inputs, randn

import lamina as lm
import lamina.functions as F
from lamina.functions.normalization import BatchNorm
from lamina.plan.kernels import KERNELS, Kernel, lower


def _tensors(case: Case) -> list[lm.Tensor]:
    arrays = case.make(np.random.default_rng(abs(hash(case.name)) % 2**32))
    return [lm.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]


def _lowered(case: Case) -> list[tuple[object, list[np.ndarray]]]:
    """(op, output arrays) of the case's ops that a plan lowers to a kernel."""
    lm.manual_seed(0)
    with inputs_kept_whole():
        outputs = case.fn(*_tensors(case))
    return [(op, outs) for op, outs in recorded_ops(outputs) if type(op) in KERNELS]


# The random ops, which the case table leaves out (it compares against references).
_RANDOM = [Case(name, fn, None, inputs(randn(4, 3, 5)))
           for name, fn in (("dropout", lambda x: F.dropout(x, 0.3)),
                            ("dropout1d", lambda x: F.dropout1d(x, 0.3)),
                            ("alpha_dropout", lambda x: F.alpha_dropout(x, 0.3, True)),
                            ("feature_alpha_dropout",
                             lambda x: F.feature_alpha_dropout(x, 0.3, True)))]
_CASES = [c for c in CASES + _RANDOM if _lowered(c)]


def test_every_kernel_meets_an_op_case() -> None:
    seen = {type(op) for case in _CASES for op, _ in _lowered(case)}
    assert set(KERNELS) - seen == set()


def _run(fn, arrays, gys):
    """fn's outputs and gradients on these arrays, from a fresh copy of its state."""
    fn = copy.copy(fn)
    fn.saved_tensors = ()
    lm.manual_seed(1)  # a random op draws the same numbers in both
    ys = fn.forward(*arrays)
    ys = ys if isinstance(ys, tuple) else (ys,)
    outs = [np.array(y) for y in ys]  # before backward, which may reuse memory
    grads = fn.backward(*gys)
    return fn, outs, grads if isinstance(grads, tuple) else (grads,)


@pytest.mark.parametrize("case", _CASES, ids=lambda c: c.name)
def test_kernels_give_their_ops_outputs_and_gradients(case: Case) -> None:
    rng = np.random.default_rng(0)
    for op, outs in _lowered(case):
        arrays = [x.array for x in op.inputs]
        gys = [rng.standard_normal(np.shape(y)).astype(y.dtype) for y in outs]
        _, want_y, want_g = _run(op, arrays, gys)
        kernel = lower(op)
        assert isinstance(kernel, Kernel) and kernel.name == op.name
        for variant in kernel.variants or ("",):
            kernel.variant = variant
            ran, got_y, got_g = _run(kernel, arrays, gys)
            for got, want in zip(got_y + list(got_g), want_y + list(want_g)):
                assert (got is None) == (want is None), (op.name, variant)
                if want is not None:
                    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9,
                                               err_msg=f"{op.name} <{variant}>")
            kernel.saved_tensors = ()
            ys = kernel.forward(*arrays)
            assert undeclared(kernel, [*arrays, *(ys if isinstance(ys, tuple) else (ys,))]) == []


def _channel_major(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(a, 1, 0)).swapaxes(0, 1)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("layout", ["channel_major", "reversed"])
@pytest.mark.parametrize("n", [2, 1])  # one sample: both layouts at once
def test_batch_norm_writes_its_buffer_in_every_layout(training, layout, n) -> None:
    """The buffer receives the result even where rows of the input's layout are copies."""
    x = np.random.default_rng(3).standard_normal((n, 3, 4, 5)) * 2 + 1
    make = _channel_major if layout == "channel_major" else (lambda a: a.transpose(0, 1, 3, 2)
                                                             .copy().swapaxes(2, 3))
    fn = lower(BatchNorm(np.zeros(3), np.ones(3), training, 0.1, 1e-5))
    fn.needs_input_grad = (False,)
    fn.out_buffers = [np.full(x.shape, np.nan)]
    out = fn.forward(make(x))
    assert np.may_share_memory(out, fn.out_buffers[0])
    np.testing.assert_allclose(out, F.batch_norm(lm.tensor(x), np.zeros(3), np.ones(3),
                                                 training=training).array, rtol=1e-12)


def test_a_kernel_shares_the_traced_ops_state_and_an_op_without_one_stays() -> None:
    x = lm.tensor(np.ones((2, 3)), requires_grad=True)
    relu = F.relu(x).creator
    kernel = lower(relu)
    assert type(kernel).__name__ == "ReLUKernel" and kernel.inputs is relu.inputs
    exp = x.exp().creator
    assert lower(exp) is exp


@pytest.mark.parametrize("b_shape", [(2, 3, 4, 5), (3, 1, 1), ()])
def test_a_binary_kernel_writes_in_its_operands_layout(b_shape) -> None:
    """A residual sum of channel-major maps stays channel-major in the plan's buffer, as
    NumPy lays it out eagerly: the next convolution reads it without a copy."""
    from lamina.functions.math import Add

    rng = np.random.default_rng(4)
    a = _channel_major(rng.standard_normal((2, 3, 4, 5)))
    b = _channel_major(rng.standard_normal(b_shape)) if len(b_shape) == 4 else \
        rng.standard_normal(b_shape)
    fn = lower(Add())
    fn.out_buffers = [np.full(a.shape, np.nan)]
    out = fn.compute(a, b)
    assert np.may_share_memory(out, fn.out_buffers[0])
    assert out.transpose(1, 0, 2, 3).flags.c_contiguous
    np.testing.assert_array_equal(out, a + b)


def test_a_binary_kernel_whose_output_outgrows_its_first_operand() -> None:
    from lamina.functions.math import Add

    a, b = np.ones((3, 1)), np.arange(4.0)
    fn = lower(Add())
    fn.out_buffers = [np.full((3, 4), np.nan)]
    np.testing.assert_array_equal(fn.compute(a, b), a + b)
