"""`compile`: trace a model's step once per input shape and run it as a static plan."""

from __future__ import annotations

import contextlib
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lamina.autograd.function import note_layouts
from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.plan import carry
from lamina.plan.compile_split import compile_split
from lamina.plan.key import ModelKey
from lamina.plan.program import Program
from lamina.plan.split import Split, require_threadpoolctl
from lamina.plan.trace import Trace, TraceError, flatten, trace
from lamina.plan.verify import (
    check_against_eager,
    check_traces,
    eval_mode,
    other_draws,
    perturbed,
    preserved,
)

# Programs kept per plan. Each holds its own buffers, so inputs whose shape changes at
# every batch (sequences of any length) would otherwise grow memory without end; past
# this many, the least recently used program is dropped and traced again when needed.
MAX_PROGRAMS = 16


class Plan:
    """A model's step, compiled: call it like the eager step it replaces.

    A training plan (built with a loss) runs forward, loss and backward and leaves the
    gradients in the parameters' `.grad`, accumulating as eager backward does; it returns
    the loss, and `plan.output` holds the model's output. An inference plan runs forward
    only and returns the model's output. A new input shape or dtype, a switch between
    train and eval mode (of the model or of any one layer), or freezing or unfreezing a
    parameter traces again (one program per signature, cached; the
    `max_programs` most recently used are kept). Replacing a layer, a
    parameter, or a buffer's array (not just their values) also traces again, and drops
    the programs bound to the old ones. With `threads` > 1, each slice of the batch has
    its program (see `compile`).
    """

    def __init__(self, model: Layer, loss_fn: Callable[..., Tensor] | None,
                 verify: bool = True, tune: bool = False, threads: int = 1) -> None:
        stateful = carry.carriers(model)
        if stateful and threads > 1:
            raise TraceError(f"plan: layer {stateful[0][0] or type(model).__name__} is "
                             "stateful, and its state holds the batch's rows on axis 1, "
                             f"which threads={threads} cannot split; compile with threads=1")
        # Stateful layers' carried state enters each program as inputs after the batch and
        # leaves as outputs after the model's: the plan hands it back to the layers.
        self.carriers = [layer for _, layer in stateful]
        self.given: tuple[Any, ...] = ()  # the carried state's structure this call
        self.layouts: dict[tuple[Any, ...], list[Any]] = {}  # a program's new state's
        self.traced: list[Any] = []  # the structure of the new state, in the latest trace
        self.layout: list[Any] = []  # ... of the latest program run
        if not isinstance(threads, int) or threads < 1:
            raise ValueError(f"plan: threads must be an int >= 1; got {threads!r}")
        if threads > 1:
            require_threadpoolctl()
        self.model, self.loss_fn, self.verify, self.tune = model, loss_fn, verify, tune
        self.threads = threads
        self.programs: OrderedDict[tuple[Any, ...], Program | Split] = OrderedDict()
        self.max_programs = MAX_PROGRAMS
        self.evicting = False  # warned that programs are being dropped
        self.model_key = ModelKey(model)
        self.traces = 0
        self.output: Tensor | None = None
        self.runner: Program | Split | None = None  # what ran the latest batch

    @property
    def train(self) -> bool:
        return self.loss_fn is not None

    @property
    def last(self) -> Program | None:
        """The latest batch's program; with the batch split over threads, the first slice's."""
        return self.runner.programs[0] if isinstance(self.runner, Split) else self.runner

    def _key(self, arrays: Sequence[Any]) -> tuple[Any, ...]:
        """What a program depends on besides its ops: the batch's signature, each layer's
        mode and plain settings, and which parameters are trained. Checked at every call,
        so that a layer put in eval mode, a dropout rate or a temperature changed, or a
        parameter frozen after compiling never runs a stale program. Drops every program
        if the model's tensors were replaced."""
        model_key, rebound = self.model_key()
        if rebound:
            self.programs.clear()
            self.layouts.clear()
        return (model_key, self.given, tuple([(a.shape, a.dtype.str) for a in arrays]))

    def program(self, *batch: Any) -> Program:
        """The compiled program for this batch's signature (tracing it if new); with the
        batch split over threads, the first slice's."""
        self._runner(self._inputs(batch))
        return self.last

    def _runner(self, arrays: list[Any]) -> Program | Split:
        key = self._key(arrays)
        if key in self.programs:
            self.programs.move_to_end(key)
        else:
            self.programs[key] = self._compile(arrays)
            self.layouts[key] = self.traced
            if len(self.programs) > self.max_programs:
                self.layouts.pop(self.programs.popitem(last=False)[0], None)
                self._warn_evicting()
        self.runner, self.layout = self.programs[key], self.layouts[key]
        return self.runner

    def _warn_evicting(self) -> None:
        if self.evicting:
            return
        self.evicting = True
        warnings.warn(f"plan: more than {self.max_programs} input signatures (shapes, dtypes, "
                      "modes, layer settings) seen; the least recently used programs are "
                      "dropped and traced again, which is slow. Pad inputs to a few fixed "
                      "shapes, or raise plan.max_programs.", RuntimeWarning, stacklevel=4)

    def __call__(self, *batch: Any, grad_scale: float = 1.0) -> Tensor:
        """Run the step on a batch. A training plan's gradients are those of `grad_scale`
        times the loss, as eager `loss.backward(grad_scale)` gives them (a slice's weight
        when gradients of several are summed); the loss returned is not scaled."""
        if grad_scale != 1.0 and not self.train:
            raise ValueError("plan: grad_scale is for a training plan (compiled with a "
                             "loss); an inference plan has no gradients")
        arrays = self._inputs(batch)
        runner = self._runner(arrays)
        results = runner.run(arrays, grad_scale)
        results = [Tensor(r if runner.fresh_results else np.array(r)) for r in results]
        note_layouts(tuple(results), ())  # laid out as the plan's kernels made them
        results = self._carry(results)
        if not self.train:
            return results[0] if len(results) == 1 else tuple(results)
        outputs = results[1:]
        self.output = outputs[0] if len(outputs) == 1 else tuple(outputs)
        return results[0]

    def memory(self) -> dict[str, int]:
        """Bytes of intermediates without reuse, with reuse (live peak), and pooled; for a
        batch split over threads, the first slice's program's (each slice has its own)."""
        return self._latest().memory()

    def describe(self) -> str:
        """The steps of the latest program: ops, values, slots, frees, pruned ops, backward;
        for a batch split over threads, the slices, then the first slice's program."""
        program, split = self._latest(), self.runner
        if not isinstance(split, Split):
            return program.describe()
        rows = ", ".join(f"[{lo}:{hi})" for lo, hi in split.edges)
        return (f"batch split over {len(split.edges)} threads, rows {rows}, loss weights "
                f"{', '.join(f'{w:.4g}' for w in split.weights)}; slice 0:\n"
                + program.describe())

    def _latest(self) -> Program:
        if self.last is None:
            raise RuntimeError("plan: nothing compiled yet; call the plan on a batch first")
        return self.last

    # -- compiling --------------------------------------------------------------------------
    def _inputs(self, batch: Sequence[Any]) -> list[Any]:
        """The batch's arrays, then the arrays of the state the stateful layers carry."""
        if not self.carriers:
            # No layer carries state (self.given stays ()): carry's calls are skipped,
            # which at batch 1, run with the caches cold from the step, cost a visible
            # share of it.
            return _arrays(batch)
        self.given = carry.kinds(self.carriers)
        return [*_arrays(batch), *(t.array for t in carry.parts(self.carriers))]

    def _carry(self, results: list[Tensor]) -> list[Tensor]:
        """Hand the new state (the last results; fresh arrays, so detached) to the stateful
        layers; return the other results."""
        if not self.carriers:  # see _inputs
            return results
        kept = len(results) - carry.count(self.layout)
        carry.hand_back(self.carriers, self.layout, results[kept:])
        return results[:kept]

    def step_fn(self) -> Callable[..., Any]:
        """The step a program traces: the model (and loss) on the batch, from the carried
        state given as the last arguments, returning the new state last."""
        model, loss_fn, carriers, given = self.model, self.loss_fn, self.carriers, self.given
        n_batch = -carry.count(given) or None  # the batch: every argument but the state's

        def run(args: tuple[Tensor, ...]) -> tuple[Any, list[Tensor]]:
            batch = args[:n_batch]
            carry.hand_back(carriers, given, args[len(batch):])
            out = model(*batch[:1], *batch[2 if loss_fn else 1:])
            self.traced = list(carry.kinds(carriers))
            return out, carry.parts(carriers)

        if loss_fn is None:
            def infer(*args: Tensor) -> Any:
                out, new = run(args)
                return (*flatten(out), *new) if new else out
            return infer

        def step(*args: Tensor) -> tuple[Tensor, ...]:
            out, new = run(args)
            return (loss_fn(out, args[1]), *flatten(out), *new)

        return step

    def _size_lazy_layers(self, arrays: Sequence[Any]) -> None:
        """A lazy layer (nn.LazyLinear, ...) takes its sizes at its first call: make that
        call now, in evaluation mode and without gradient, so that the trace sees the
        layer it becomes, and its statistics stay as they were."""
        if any(hasattr(layer, "initialize_parameters") for _, layer in self.model.named_layers()):
            with preserved(self.model), no_grad(), eval_mode(self.model, True):
                self.step_fn()(*[Tensor(a) for a in arrays])

    def _trace(self, arrays: Sequence[Any]) -> Trace:
        self._size_lazy_layers(arrays)
        params = [*self.model.parameters(), *self.model.buffers()]  # buffers: read afresh
        with preserved(self.model), (contextlib.nullcontext() if self.train else no_grad()):
            traced = trace(self.step_fn(), [Tensor(a) for a in arrays], params)
        if self.train:  # kept for loss_weights
            traced.loss = float(traced.arrays[traced.outputs[0]])
        traced.drop_activations()
        return traced

    def _compile(self, arrays: list[Any]) -> Program | Split:
        n = len(arrays[0]) if arrays and np.ndim(arrays[0]) else 0
        if self.threads == 1 or n < 2:
            return self._compile_whole(arrays)
        return self._compile_split(arrays, n)

    def _compile_whole(self, arrays: list[Any], want: list[Any] | None = None) -> Program:
        """One program for the whole batch, checked against eager (or against `want`, the
        eager step's outcome from eager_outcome, where the caller has it)."""
        program = self._compile_one(arrays)
        if self.verify and self.train:
            program.release_memory()  # tuning's buffers, not held through the eager step
            check_against_eager(self, program.run, arrays, want)
        return program

    def _compile_split(self, arrays: list[Any], n: int) -> Program | Split:
        """Programs for the batch's slices; tuned, the split or the whole step, the faster
        (compile_split.py)."""
        return compile_split(self, arrays, n)

    def _compile_one(self, arrays: list[Any], tune: bool | None = None,
                     like: Program | None = None, first: Trace | None = None,
                     other: Trace | None = None) -> Program:
        """Trace the step on `arrays` (or take `first`, that trace) and check the trace
        against a second, of other values (see verify.perturbed), or against `other`'s or
        `like`'s: another slice of the same batch, whose values differ as much (`like`
        its program, whose analysis the new program reuses where it applies: see
        Program)."""
        first = first if first is not None else self._trace(arrays)
        other = like.trace if like is not None else other
        if other is None:
            with other_draws():
                other = self._trace([perturbed(a) for a in arrays])
        check_traces(first, other)
        self.traces += 1
        with preserved(self.model):  # analysing runs the forward: no trace of it may stay
            return Program(first, self.train, self.tune if tune is None else tune, like)


def _arrays(batch: Sequence[Any]) -> list[Any]:
    return [b.array if isinstance(b, Tensor) else np.asarray(b) for b in batch]
