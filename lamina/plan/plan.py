"""`compile`: trace a model's step once per input shape and run it as a static plan."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import lamina as lm
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.plan.program import Program
from lamina.plan.trace import Trace, TraceError, flatten, trace


class Plan:
    """A model's step, compiled: call it like the eager step it replaces.

    A training plan (built with a loss) runs forward, loss and backward and leaves the
    gradients in the parameters' `.grad`, accumulating as eager backward does; it returns
    the loss, and `plan.output` holds the model's output. An inference plan runs forward
    only and returns the model's output. A new input shape or dtype, or a switch between
    train and eval mode, traces again (one program per signature, cached).
    """

    def __init__(self, model: Layer, loss_fn: Callable[..., Tensor] | None,
                 verify: bool = True, tune: bool = False) -> None:
        stateful = [n for n, layer in model.named_layers() if getattr(layer, "stateful", False)]
        if stateful:
            raise TraceError(f"plan: layer {stateful[0] or type(model).__name__} is stateful; "
                             "its state crosses calls, which a plan cannot capture. "
                             "Compile the model with stateful: false.")
        self.model, self.loss_fn, self.verify, self.tune = model, loss_fn, verify, tune
        self.programs: dict[tuple[Any, ...], Program] = {}
        self.traces = 0
        self.output: Tensor | None = None
        self.last: Program | None = None

    @property
    def train(self) -> bool:
        return self.loss_fn is not None

    def _key(self, arrays: Sequence[Any]) -> tuple[Any, ...]:
        return (self.model.training, *((a.shape, a.dtype.str) for a in arrays))

    def program(self, *batch: Any) -> Program:
        """The compiled program for this batch's signature (tracing it if new)."""
        arrays = [b.data if isinstance(b, Tensor) else np.asarray(b) for b in batch]
        key = self._key(arrays)
        if key not in self.programs:
            self.programs[key] = self._compile(arrays)
        self.last = self.programs[key]
        return self.last

    def __call__(self, *batch: Any) -> Tensor:
        program = self.program(*batch)
        arrays = [b.data if isinstance(b, Tensor) else np.asarray(b) for b in batch]
        results = [Tensor(np.array(r)) for r in program.run(arrays)]
        if not self.train:
            return results[0] if len(results) == 1 else tuple(results)
        outputs = results[1:]
        self.output = outputs[0] if len(outputs) == 1 else tuple(outputs)
        return results[0]

    def memory(self) -> dict[str, int]:
        """Bytes of intermediates without reuse, with reuse (live peak), and pooled."""
        return self._latest().memory()

    def describe(self) -> str:
        """The steps of the latest program: ops, values, slots, frees, pruned ops, backward."""
        return self._latest().describe()

    def _latest(self) -> Program:
        if self.last is None:
            raise RuntimeError("plan: nothing compiled yet; call the plan on a batch first")
        return self.last

    # -- compiling --------------------------------------------------------------------------
    def _step_fn(self) -> Callable[..., Any]:
        model, loss_fn = self.model, self.loss_fn
        if loss_fn is None:
            return lambda x, *rest: model(x, *rest)

        def step(x: Tensor, y: Tensor, *rest: Tensor) -> tuple[Tensor, ...]:
            out = model(x, *rest)
            return (loss_fn(out, y), *flatten(out))

        return step

    def _trace(self, arrays: Sequence[Any]) -> Trace:
        params = list(self.model.parameters())
        with _preserved(self.model):
            if self.train:
                return trace(self._step_fn(), [Tensor(a) for a in arrays], params)
            with lm.no_grad():
                return trace(self._step_fn(), [Tensor(a) for a in arrays], params)

    def _compile(self, arrays: list[Any]) -> Program:
        first = self._trace(arrays)
        second = self._trace([_perturbed(a) for a in arrays])
        if first.signature() != second.signature():
            i = next((k for k, (a, b) in enumerate(zip(first.signature(), second.signature()))
                      if a != b), min(len(first.nodes), len(second.nodes)))
            what = (f"op {i} is {first.nodes[i].name} for one input and "
                    f"{second.nodes[i].name} for another" if i < min(len(first.nodes),
                                                                      len(second.nodes))
                    else f"one input runs {len(first.nodes)} ops, another {len(second.nodes)}")
            raise TraceError(f"plan: the model's ops depend on the input values ({what}): "
                             "Python control flow on data cannot be captured by a plan. "
                             "Train this model eagerly, or express the branch with tensor ops.")
        self.traces += 1
        with _preserved(self.model):  # analysing runs the forward: no trace of it may stay
            program = Program(first, self.train, self.tune)
        if self.verify and self.train:
            self._check(program, arrays)
        return program

    def _check(self, program: Program, arrays: list[Any]) -> None:
        """Run the eager step and the plan from one state; they must agree (then restore)."""
        params = list(self.model.parameters())
        with _preserved(self.model):
            loss = self._step_fn()(*[Tensor(a) for a in arrays])[0]
            if loss.requires_grad:  # a model with nothing to train has no backward
                loss.backward()
            want = [loss.data.copy()] + [None if p.grad is None else p.grad.copy()
                                         for p in params]
        with _preserved(self.model):
            got = [np.array(program.run(arrays)[0])] + [p.grad for p in params]
        for i, (a, b) in enumerate(zip(want, got)):
            if (a is None) != (b is None) or (a is not None and not np.allclose(
                    a, b, rtol=1e-4, atol=1e-6 * max(1.0, float(np.abs(a).max(initial=0))))):
                what = "the loss" if i == 0 else f"the gradient of parameter {i - 1}"
                raise TraceError(f"plan: replaying the trace does not reproduce {what} of the "
                                 "eager step; the model has effects a plan cannot capture")


class _preserved:
    """Restore the RNG, every buffer (batch-norm statistics) and the parameters' gradients
    on exit; gradients start empty inside. Compiling, and its checks, leave the model
    exactly as they found it."""

    def __init__(self, model: Layer) -> None:
        self.model = model

    def __enter__(self) -> None:
        self.rng = lm.get_rng_state()
        self.buffers = [(b, b.data.copy()) for b in self.model.buffers()]
        self.grads = [(p, p.grad) for p in self.model.parameters()]
        for p, _ in self.grads:
            p.grad = None

    def __exit__(self, *exc: Any) -> None:
        lm.set_rng_state(self.rng)
        for b, saved in self.buffers:
            b.data[...] = saved
        for p, grad in self.grads:
            p.grad = grad


def _perturbed(a: np.ndarray) -> np.ndarray:
    """Another input of the same signature: batch order reversed, floats negated and shifted."""
    b = a[::-1].copy() if a.ndim else a.copy()
    if b.dtype.kind == "f":
        b = -b + b.dtype.type(0.5)
    return b


def compile(model: Layer, loss_fn: Callable[..., Tensor] | None = None,
            example_batch: Sequence[Any] | None = None, verify: bool = True,
            tune: bool = False) -> Plan:
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

    Returns:
        A Plan: `plan(x, y)` returns the loss with gradients in each parameter's `.grad`;
        an inference plan's `plan(x)` returns the output.

    Raises:
        TraceError: the model branches in Python on tensor values, reads state from outside
            the call, or has stateful layers. A branch taken through `tensor.data` is
            found only when the example and a second, perturbed batch (order reversed,
            floats negated) take different paths; every other case is found at once.

    Example:
        >>> step = lm.plan.compile(model, F.cross_entropy, (x, y))
        >>> loss = step(x, y); optimizer.step(); optimizer.zero_grad()
    """
    plan = Plan(model, loss_fn, verify, tune)
    if example_batch is not None:
        plan.program(*example_batch)
    return plan
