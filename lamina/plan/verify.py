"""What keeps a plan honest: a second trace on a perturbed batch must record the same ops
and constants as the first (else the model's ops depend on the data), and compiling, with
its checks against eager, leaves the model as it found it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina import state as lamina_state
from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer, edited
from lamina.nn.outputs import flatten
from lamina.plan import carry
from lamina.plan.trace import Trace, TraceError
from lamina.random import get_rng_state, set_rng_state

if TYPE_CHECKING:
    from lamina.plan.plan import Plan


def check_same_ops(first: Trace, second: Trace) -> None:
    """Raise TraceError where the two traces record different ops: Python control flow on
    the batch's values, which a plan cannot capture."""
    if first.signature() == second.signature():
        return
    i = next((k for k, (a, b) in enumerate(zip(first.signature(), second.signature()))
              if a != b), min(len(first.nodes), len(second.nodes)))
    what = (f"op {i} is {first.nodes[i].name} for one input and {second.nodes[i].name} "
            f"for another" if i < min(len(first.nodes), len(second.nodes))
            else f"one input runs {len(first.nodes)} ops, another {len(second.nodes)}")
    raise TraceError(f"plan: the model's ops depend on the input values ({what}): Python "
                     "control flow on data cannot be captured by a plan. Train this model "
                     "eagerly, or express the branch with tensor ops.")


def check_constants(first: Trace, second: Trace) -> None:
    """Raise TraceError where a constant made during the call differs between the traces
    of two batches: it was computed from the batch's values outside the ops (through
    `.array` or NumPy), or drawn at random, and a plan would replay the example's."""
    for n in first.nodes:
        for v in n.inputs:
            if first.kinds[v] != "const":
                continue
            a, b = first.arrays[v], second.arrays[v]
            if a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                continue
            raise TraceError(
                f"plan: op {n.index} ({n.name}) reads a tensor of shape {a.shape} made during "
                "the call that differs from one batch to another: it was computed from the "
                "batch's values outside tensor ops (through .array or NumPy), or drawn at "
                "random (lm.randn_like, lm.rand, Tensor.bernoulli in forward), and a plan "
                "would replay the example's at every step. Compute it with tensor ops "
                "(comparisons and arithmetic on tensors are traced; dropout draws anew), "
                "or train eagerly.")


def check_traces(first: Trace, second: Trace) -> None:
    """Both checks: the same ops, the same constants."""
    check_same_ops(first, second)
    check_constants(first, second)


@contextlib.contextmanager
def other_draws() -> Iterator[None]:
    """lamina's generator moved on by a draw, then put back: the second trace draws other
    numbers than the first, so a random tensor made outside an op (`lm.randn_like(h)` in
    a forward) is a constant that differs between them, which check_constants refuses,
    instead of one draw replayed at every step. Ops that draw (dropout) run each step."""
    saved = get_rng_state()
    lamina_state.rng().random()
    try:
        yield
    finally:
        set_rng_state(saved)


def perturbed(a: np.ndarray) -> np.ndarray:
    """Another input of the same signature: batch order reversed, floats negated and
    shifted, and each integer value swapped for the next larger one that the batch holds
    (the smallest for the largest). Integers stay valid ids and labels, while anything
    counted from them, which the reversal alone leaves as it was (np.bincount(ids)),
    changes."""
    b = a[::-1].copy() if a.ndim else a.copy()
    if b.dtype.kind == "f":
        b = -b + b.dtype.type(0.5)
    elif b.dtype.kind in "iu" and b.size:
        values, index = np.unique(b, return_inverse=True)
        b = np.roll(values, -1)[index].reshape(b.shape)
    return b


@contextlib.contextmanager
def eval_mode(model: Layer, on: bool) -> Iterator[None]:
    """Every layer in eval mode inside (if `on`); each layer's own mode restored after."""
    modes = [(layer, layer.training) for _, layer in model.named_layers()]
    if on:
        model.eval()
    try:
        yield
    finally:
        for layer, mode in modes:
            object.__setattr__(layer, "training", mode)  # as Layer.train sets it
        edited()


class preserved:
    """Restore the RNG, every buffer (batch-norm statistics) and the parameters' gradients
    on exit; gradients start empty inside. Compiling, and its checks, leave the model
    exactly as they found it."""

    def __init__(self, model: Layer) -> None:
        self.model = model

    def __enter__(self) -> None:
        self.rng = get_rng_state()
        self.buffers = [(b, b.array.copy()) for b in self.model.buffers()]
        self.grads = [(p, p.grad) for p in self.model.parameters()]
        for p, _ in self.grads:
            p.grad = None
        self.states = [(layer, layer.state) for _, layer in carry.carriers(self.model)]

    def __exit__(self, *exc: Any) -> None:
        set_rng_state(self.rng)
        for b, saved in self.buffers:
            if b.array.shape == saved.shape:  # else a lazy layer's, sized inside: its own
                b.array[...] = saved
        for p, grad in self.grads:
            p.grad = grad
        for layer, state in self.states:
            layer.state = state


def eager_outcome(plan: Plan, arrays: list[Any]) -> list[Any]:
    """What the eager step gives from the model's state, which is then restored: a
    training plan's loss and gradients, an inference plan's outputs and None for each
    parameter (what check_against_eager compares)."""
    params = list(plan.model.parameters())
    step = plan.step_fn()
    with preserved(plan.model):
        if plan.train:
            loss = step(*[Tensor(a) for a in arrays])[0]
            if loss.requires_grad:  # a model with nothing to train has no backward
                loss.backward()
            want = [loss.array.copy()]
        else:
            with no_grad():
                want = [t.array for t in flatten(step(*[Tensor(a) for a in arrays]))]
        return want + [None if p.grad is None else p.grad.array.copy() for p in params]


def check_against_eager(plan: Plan, run: Callable[[list[Any]], tuple[Any, ...]],
                        arrays: list[Any], want: list[Any] | None = None) -> None:
    """Run the eager step (or take its `want`, from eager_outcome) and the plan's `run`
    from one state; they must agree (then restore). A training plan compares the loss and
    the gradients, an inference plan its outputs."""
    params = list(plan.model.parameters())
    if want is None:
        want = eager_outcome(plan, arrays)
    outputs = len(want) - len(params)
    with preserved(plan.model):
        got = [np.array(r) for r in run(arrays)][:outputs] + [
            None if p.grad is None else p.grad.array for p in params]
    for i, (a, b) in enumerate(zip(want, got)):
        if (a is None) != (b is None) or (a is not None and not np.allclose(
                a, b, rtol=1e-4, atol=1e-6 * max(1.0, float(np.abs(a).max(initial=0))))):
            what = ((f"output {i}" if not plan.train else "the loss") if i < outputs
                    else f"the gradient of parameter {i - outputs}")
            raise TraceError(f"plan: replaying the trace does not reproduce {what} of the "
                             "eager step; the model has effects a plan cannot capture"
                             + (" or mixes the rows of a batch it splits over threads"
                                if plan.threads > 1 else ""))
