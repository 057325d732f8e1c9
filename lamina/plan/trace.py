"""Tracing: run a model once, eagerly, and record every op with the arrays it read and made.

A trace is a list of nodes over numbered values. A value is a source (a batch input, a
parameter read fresh at every run, or a constant made during the call) or an op output.
"""

from __future__ import annotations

import contextlib
import os
import traceback
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from lamina import state
from lamina.autograd import complex_rules
from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.nn.outputs import flatten


class TraceError(RuntimeError):
    """The model does something a static plan cannot capture; the message says what."""


@dataclass
class Node:
    """One op: its Function instance (a plan lowers it to a kernel) and its value numbers."""

    fn: Function
    inputs: list[int]
    outputs: list[int]
    index: int = 0  # position in the trace, for messages and tie-breaking

    @property
    def name(self) -> str:
        return self.fn.name


@dataclass
class Trace:
    nodes: list[Node]
    kinds: list[str]  # per value: "input", "param", "const" or "op"
    tensors: list[Tensor | None]  # source tensors (params are read through them)
    shapes: list[tuple[int, ...]]
    dtypes: list[Any]
    arrays: list[Any]  # trace-time arrays (op outputs' until drop_activations)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    loss: float | None = None  # a training step's (its first output), as traced

    def drop_activations(self) -> None:
        """Free what the traced eager run kept: its op outputs, each op's input tensors
        and what it saved for backward (a ResNet's window matrices): a step's worth of
        activations, which the analysis recomputes. Constants, parameters and the batch
        stay."""
        for n in self.nodes:
            n.fn.saved_tensors = ()
            vars(n.fn).pop("inputs", None)  # the eager graph's edges: its input tensors
        for v, kind in enumerate(self.kinds):
            if kind == "op":
                self.arrays[v] = None

    def signature(self) -> list[tuple[str, tuple[int, ...]]]:
        """What each op was and how it was wired: two traces of one program agree here."""
        return [(n.name, tuple(n.inputs)) for n in self.nodes]


class Tracer:
    """Records the ops run while it is state.tracer. It holds the sources (inputs,
    parameters, constants), whose arrays the trace keeps, and only watches op outputs and
    the other tensors made during the call: a model run without gradients frees its
    activations as it goes, as in eager mode. A watched tensor's entries are forgotten
    when it dies, before a later tensor can be given its id."""

    def __init__(self, inputs: Sequence[Tensor], params: Sequence[Tensor] = ()) -> None:
        self.params = {id(p) for p in params}  # frozen ones too: read fresh at every run
        self.values: dict[int, int] = {}  # id(tensor) -> value number
        self.keep: list[Tensor] = []  # the sources
        self.watched: dict[int, weakref.ref] = {}
        self.nodes: list[Node] = []
        self.kinds: list[str] = []
        self.tensors: list[Tensor | None] = []
        self.shapes: list[tuple[int, ...]] = []
        self.dtypes: list[Any] = []
        self.made: set[int] = set()  # tensors created while tracing: constants
        self.op_values: set[int] = set()
        self.inputs = [self._value(t, "input") for t in inputs]

    def _value(self, t: Tensor, kind: str) -> int:
        self.values[id(t)] = n = len(self.kinds)
        if kind == "op":
            self._watch(t)
        else:
            self.keep.append(t)
        self.kinds.append(kind)
        self.tensors.append(t if kind != "op" else None)
        self.shapes.append(t.array.shape)
        self.dtypes.append(t.array.dtype)
        return n

    def _watch(self, t: Tensor) -> None:
        key = id(t)

        def gone(_: Any) -> None:
            self.values.pop(key, None)
            self.made.discard(key)
            self.op_values.discard(key)
            self.watched.pop(key, None)

        self.watched[key] = weakref.ref(t, gone)

    def _source(self, t: Tensor) -> int:
        n = self.values.get(id(t))
        if n is not None:
            return n
        if id(t) in self.params or (t.requires_grad and t.creator is None):
            return self._value(t, "param")
        return self._other(t)

    def _other(self, t: Tensor) -> int:
        """A tensor read that is neither an input nor a parameter: made during the call, a
        constant; made before it, refused (a plan would freeze it)."""
        if id(t) in self.made:
            return self._value(t, "const")
        raise TraceError(
            f"plan: the model reads a tensor of shape {t.shape} that was made before the "
            "traced call and is neither a parameter nor an input (a cached tensor); a plan "
            "would freeze its value. Pass it as an input."
        )

    # -- hooks called by Function.apply and Tensor ------------------------------------------
    def created(self, t: Tensor) -> None:
        self.made.add(id(t))
        self._watch(t)

    def record(self, fn: Function, xs: Sequence[Tensor], outs: Any) -> None:
        if complex_rules.ran_on_complex(fn):
            raise TraceError(
                f"plan: {fn.name}{_user_frame()} works on complex tensors, and a plan's "
                "kernels and buffers are for real ones; run this model eagerly")
        ins = [self._source(x) for x in xs]
        outs = outs if isinstance(outs, tuple) else (outs,)
        numbers = [self._value(o, "op") for o in outs]
        self.op_values.update(id(o) for o in outs)
        self.nodes.append(Node(fn, ins, numbers, len(self.nodes)))
        if "inputs" not in vars(fn):  # run without a graph: no backward will read them
            fn.saved_tensors = ()

    def shaped_by_data(self, t: Tensor, how: str) -> None:
        """Refuse `how` on a value read from the batch: its result's shape depends on the
        values, and a plan's buffers are laid out for the example's."""
        if self._varies(t):
            raise TraceError(
                f"plan: {how}{_user_frame()} gives a result whose shape depends on the batch's "
                "values, which a plan cannot lay out in advance. Multiply by the mask "
                "instead (x * mask), or train this model eagerly.")

    def _varies(self, t: Tensor) -> bool:
        """t may hold other values at the next run: an input of the traced call or an op's
        output (not a constant, nor a parameter read as it is)."""
        n = self.values.get(id(t))
        return id(t) in self.op_values or (n is not None and self.kinds[n] == "input")

    def converted(self, t: Tensor, how: str) -> None:
        if self._varies(t):
            where = _user_frame()
            raise TraceError(
                f"plan: {how} on a traced value{where} turns data into Python control flow, "
                "which a plan cannot capture: the plan would replay whichever branch the "
                "example took. Compute the branch with tensor ops (e.g. F.clip, masks), or "
                "train this model eagerly."
            )

    def finish(self, outputs: Sequence[Tensor]) -> Trace:
        missing = [i for i, t in enumerate(outputs) if id(t) not in self.values]
        if missing:
            raise TraceError(f"plan: output {missing[0]} was not computed by traced ops")
        arrays: list[Any] = [None] * len(self.kinds)  # an op output's where it is alive
        shapes, dtypes = list(self.shapes), list(self.dtypes)
        watched = [r() for r in self.watched.values()]
        for t in [*self.keep, *(t for t in watched if t is not None)]:
            n = self.values.get(id(t))
            if n is not None:
                arrays[n] = t.array
                shapes[n], dtypes[n] = t.array.shape, t.array.dtype
        return Trace(self.nodes, self.kinds, self.tensors, shapes, dtypes, arrays,
                     self.inputs, [self.values[id(t)] for t in outputs])


# lamina's own files: the installed package's folder, not any folder named lamina (a user's
# project, or a checkout of lamina itself, may well be called that)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _user_frame() -> str:
    for frame in reversed(traceback.extract_stack()[:-3]):
        if not os.path.abspath(frame.filename).startswith(_PACKAGE):
            return f" at {frame.filename}:{frame.lineno} ({frame.line})"
    return ""


@contextlib.contextmanager
def tracing(inputs: Sequence[Tensor], params: Sequence[Tensor] = (),
            kind: type[Tracer] = Tracer) -> Iterator[Tracer]:
    """Record every op run inside the block with a `kind` tracer (a subclass records for
    another purpose: ONNX export); nested tracing is an error."""
    if state.tracer is not None:
        raise TraceError("plan: already tracing; plans cannot be compiled inside a trace")
    tracer = kind(inputs, params)
    state.tracer = tracer
    try:
        yield tracer
    finally:
        state.tracer = None


def trace(fn: Callable[..., Any], inputs: Sequence[Tensor], params: Sequence[Tensor] = ()
          ) -> Trace:
    """Run fn(*inputs) once under the tracer; fn returns a Tensor or a tuple of Tensors.

    `params` are read afresh at every run of the plan (trainable or frozen)."""
    with tracing(inputs, params) as tracer:
        result = fn(*inputs)
    outputs = flatten(result)
    if not all(isinstance(t, Tensor) for t in outputs):
        raise TraceError("plan: the traced function must return tensors")
    return tracer.finish(outputs)
