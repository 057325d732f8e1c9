"""Execution plans: trace a step once, then run it as an ordered list of kernels over
preallocated buffers (`lamina.plan.compile`).

The compiler's passes are one module each (see program.py); the kernels the plan lowers
ops to live in kernels/.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.plan.plan import Plan
from lamina.plan.trace import TraceError

__all__ = ["Plan", "TraceError", "compile"]


def compile(model: Layer, loss_fn: Callable[..., Tensor] | None = None,
            example_batch: Sequence[Any] | None = None, verify: bool = True,
            tune: bool = False, threads: int = 1) -> Plan:
    """Compile a model's step into an execution plan.

    Args:
        model: the layer to run.
        loss_fn: `loss_fn(output, target) -> scalar Tensor` for a training plan; None for
            an inference plan (forward only; no backward graph is ever built).
        example_batch: (x, y) for training, (x,) for inference; traced at once when given,
            else at the first call.
        verify: check, at each compile, that the plan reproduces the eager step's loss and
            gradients on the example batch.
        tune: pick each op's fastest interchangeable kernel (which side of a GEMM the
            batch goes on; how a convolution lays out its windows) by timing whole steps
            on the example batch, as cuDNN's benchmark mode does. Results still equal
            eager mode's to float rounding, but the choice, and so the last bits, may
            differ from one compile to the next.
        threads: split each batch along axis 0 into this many slices and run them at once,
            each through its own program on its own thread, with BLAS held to one thread
            inside the step (threadpoolctl). Pays where much of a step is elementwise work
            NumPy runs on one core (pooling, im2col, activations); a small step that is
            mostly GEMMs may run slower: time both. The loss must be a mean or a sum over
            the rows (checked), and no op may mix rows (batch norm in training: refused).
            Dropout draws its whole batch's mask on the calling thread, in eager order,
            and hands each slice its rows. Results equal the unsplit step's to float
            rounding. The BLAS limit is process-wide while a step runs.

    Returns:
        A Plan: `plan(x, y)` returns the loss with gradients in each parameter's `.grad`;
        an inference plan's `plan(x)` returns the output.

    Raises:
        TraceError: the model branches in Python on tensor values, or reads state from
            outside the call (a stateful layer's carried state is not outside: it is each
            program's input, and the new state its output, handed back). A branch taken
            through `tensor.array` is found only when the example and a second, perturbed
            batch (order reversed, floats negated, integer values swapped) take different
            paths; every other case is found at once.
            With threads > 1: an op mixes rows, a random op's input is not rows of the
            batch in every slice, the loss is not a mean or sum over rows, or a layer is
            stateful.
        ImportError: threads > 1 without threadpoolctl.

    Examples:
        >>> step = lm.plan.compile(model, F.cross_entropy, (x, y))
        >>> loss = step(x, y); optimizer.step(); optimizer.zero_grad()
    """
    plan = Plan(model, loss_fn, verify, tune, threads)
    if example_batch is not None:
        plan.program(*example_batch)
    return plan
