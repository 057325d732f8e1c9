"""A compiled program: one trace through the compiler's passes, and a generated step.

The passes, in order, each a function of its own module:
prune (graph) -> rewrite (rewrite) -> order (graph) -> lower to kernels (kernels) ->
gradient analysis -> liveness (liveness) -> kernel hints -> buffer assignment (buffers)
-> emit (emit, at the first run) -> tune (tune, if asked).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import allocator
from lamina.autograd.delivery import accumulate_grad
from lamina.plan.buffers import assign_slots, release_steps, remake_steps
from lamina.plan.emit import emit
from lamina.plan.graph import prune, toposort
from lamina.plan.kernels import Kernel, lower
from lamina.plan.liveness import Extents, Liveness
from lamina.plan.report import describe, memory
from lamina.plan.rewrite import rewrite
from lamina.plan.trace import Node, Trace
from lamina.plan.tune import tune_variants

# A training step frees the slots of this many bytes or more at their last read
# (buffers.release_steps) and makes them again where the next run first writes them;
# smaller ones stay pooled.
RELEASE_BYTES = 1 << 20


class Program:
    # run's results may lie in the program's buffers (a view of a pooled value), which the
    # next run overwrites: the plan copies them out.
    fresh_results = False

    def __init__(self, trace: Trace, train: bool, tune: bool = False,
                 like: Program | None = None) -> None:
        """like: a program compiled from a trace of the same ops on arrays of the same
        shapes (another slice of a split batch); where this one's ops, values and shapes
        turn out the same, its kernels' hints and the liveness are taken from it, not
        probed again (two runs of the forward)."""
        self.trace, self.train = trace, train
        self.loss = trace.outputs[0] if train else None
        self.params = [(v, trace.tensors[v]) for v, kind in enumerate(trace.kinds)
                       if kind == "param"]  # (value, tensor): read afresh at every run
        kept = prune(trace.nodes, trace.outputs)
        self.pruned = [n for n in trace.nodes if n not in kept]
        nodes, self.rewrites = rewrite(kept, trace)
        self.forward = [Node(lower(n.fn), n.inputs, n.outputs, n.index)
                        for n in toposort(nodes)]
        _release_replaced(trace, self.forward)
        self.grad_values = needs_grad(trace, self.forward) if train else set()
        # An op is in backward where its (float) outputs take gradient: a comparison of a
        # value that does, which gives booleans, is not.
        self.backward = [n for n in reversed(self.forward) if n.outputs[0] in self.grad_values]
        in_backward = {id(n) for n in self.backward}
        for n in self.forward:
            n.fn.needs_input_grad = tuple(v in self.grad_values and id(n) in in_backward
                                          for v in n.inputs)
        # The program whose analysis this one shares (and whose tuning it may take).
        self.twin = like if like is not None and same_program(self, like) else None
        self.saving: set[int] = set()  # inference: the steps whose ops keep arrays
        if self.twin is not None:
            self.live, self.saving = self.twin.live, self.twin.saving
            copy_hints(self.twin.forward, self.forward)
        else:
            # What a kernel keeps depends on its hints, which depend on what the others
            # keep: probe, hint, and probe again for the liveness the hinted kernels give,
            # where a hint changes what some kernel does.
            self.live = self._liveness()
            if give_hints(self.forward, self.live):
                self.live = self._liveness()
        self.slots, self.slot_meta = assign_slots(trace, self.forward, self.live.last_use)
        self.frees = self.live.frees()
        # Only where malloc keeps freed memory: else each step would fault the slots in.
        end = len(self.forward) + len(self.backward)
        self.releases = (release_steps(self.slots, self.slot_meta, self.live.last_use, end,
                                       RELEASE_BYTES, allocator.MMAP_THRESHOLD)
                         if train and allocator.keeps_freed_memory() else {})
        self.remakes = remake_steps(self.forward, self.slots, self.releases)
        self.buffers: list[Any] | None = None
        self.slot_users: list[list[tuple[list[Any], int]]] = []  # (out_buffers, index)
        # What each op kept in the probe is a run's worth of activations no run reads.
        self.release_memory()
        self.after_forward: Any = None  # a callable run between forward and backward
        # A program running one slice of a split batch (see split.Split) seeds backward
        # with its slice's weight in the loss and keeps its parameters' gradients in
        # `collected` (tensor id -> (tensor, array)) for the plan to sum: programs on
        # other threads must not write one tensor's .grad at once.
        self.loss_weight = 1.0  # the gradient backward starts from (a split slice's share)
        self.collected: dict[int, tuple[Any, Any]] | None = None
        if tune:
            tune_variants(self)

    def _liveness(self) -> Liveness:
        """Run the forward on the trace's own arrays, so that every op holds what it would
        hold in a run (the caller restores RNG and buffers), and read liveness off where
        each value's array lay. A value is dropped after the last op of the forward that
        reads it, as in a run: what backward reads, the ops keep (save_for_backward), so
        the probe holds no more than a run does."""
        env = list(self.trace.arrays)
        for v, p in self.params:
            env[v] = p.array
        where = Extents()
        extents = [where.of(a) for a in env]
        drop = self._last_reads()
        self.saving.clear()
        for t, n in enumerate(self.forward):
            if isinstance(n.fn, Kernel):
                n.fn.out_buffers = None
            n.fn.saved_tensors = ()  # what the op declares now, not what it kept before
            ys = n.fn.forward(*[env[v] for v in n.inputs])
            for v, y in zip(n.outputs, ys if isinstance(ys, tuple) else (ys,)):
                env[v], extents[v] = y, where.of(y)
            for v in drop.get(t, ()):
                env[v] = None
            if not self.train and n.fn.saved_tensors:  # for a backward that never runs
                self.saving.add(t)
                n.fn.saved_tensors = ()
        return Liveness(self.trace, self.forward, self.backward, extents, where)

    def _last_reads(self) -> dict[int, list[int]]:
        """The op values each forward step reads (or makes) for the last time; the
        program's outputs excepted."""
        last: dict[int, int] = {}
        for t, n in enumerate(self.forward):
            for v in (*n.inputs, *n.outputs):
                last[v] = t
        by_step: dict[int, list[int]] = {}
        for v, t in last.items():
            if self.trace.kinds[v] == "op" and v not in self.trace.outputs:
                by_step.setdefault(t, []).append(v)
        return by_step

    # -- running ----------------------------------------------------------------------------
    def run(self, arrays: list[Any], scale: float = 1.0) -> tuple[Any, ...]:
        """Run forward (and backward, for a training program) on the batch's arrays; the
        gradients are those of `scale` times the loss."""
        if self.buffers is None:
            self._prepare()
        # As in PyTorch, invalid values and overflows give no warning (BLAS may multiply a
        # non-finite input by its padding zeros; the NaN guard reports non-finite values).
        # One errstate for the step, not one per op: at batch 1 each costs as much as a
        # small op, with the caches cold from the products.
        with np.errstate(invalid="ignore", over="ignore"):
            return self.step(arrays, scale)

    def _prepare(self) -> None:
        """Allocate the slots and generate the step's code (see emit), once."""
        self.buffers = [None] * len(self.slot_meta)
        self.slot_users = [[] for _ in self.slot_meta]
        for n in self.forward:
            if isinstance(n.fn, Kernel):
                outs = n.fn.out_buffers = [None] * len(n.outputs)
                for i, v in enumerate(n.outputs):
                    if v in self.slots:
                        self.slot_users[self.slots[v]].append((outs, i))
        for s in range(len(self.slot_meta)):
            self._make_slot(s)
        self.step, self.source = emit(self)

    def _make_slot(self, s: int) -> None:
        """Allocate slot s and hand it to the kernels that write into it."""
        shape, dtype = self.slot_meta[s]
        buf = self.buffers[s] = np.empty(shape, dtype)
        for outs, i in self.slot_users[s]:
            outs[i] = buf

    def release_slots(self, t: int) -> None:
        """Drop the slots whose values step t read last (see `releases`), from the
        program and from the kernels that write into them, so that their memory is
        freed once the values' last views go."""
        for s in self.releases[t]:
            self.buffers[s] = None
            for outs, i in self.slot_users[s]:
                outs[i] = None

    def remake_slots(self, t: int) -> None:
        """Make the released slots that forward step t writes first again."""
        for s in self.remakes[t]:
            if self.buffers[s] is None:
                self._make_slot(s)

    def release_memory(self) -> None:
        """Drop the buffers and what the ops kept from the last run (a step's
        activations); the next run allocates them again. For a program kept aside while
        another is measured."""
        self.buffers, self.slot_users = None, []
        for n in self.forward:
            n.fn.saved_tensors = ()
            if isinstance(n.fn, Kernel):
                n.fn.out_buffers = None

    def _param_grad(self, p: Any, g: Any, given: set[int]) -> None:
        if self.collected is None:
            accumulate_grad(p, g, given)
            return
        have = self.collected.get(id(p))
        self.collected[id(p)] = (p, g if have is None else have[1] + g)

    # -- reports ----------------------------------------------------------------------------
    def memory(self) -> dict[str, int]:
        """Bytes of intermediate arrays: all at once, the live peak, and the pooled slots."""
        return memory(self)

    def describe(self) -> str:
        """The steps: ops, values, slots, frees, pruned ops, rewrites, backward."""
        return describe(self)


def _release_replaced(trace: Trace, forward: list[Node]) -> None:
    """Free what the traced ops that no longer run (pruned, fused, lowered to a kernel that
    took over their state) kept from the trace's eager run: a convolution's window
    matrix, a mask. The trace keeps its nodes, for their names."""
    running = {id(n.fn) for n in forward}
    for n in trace.nodes:
        if id(n.fn) not in running:
            n.fn.release()


def needs_grad(trace: Trace, forward: list[Node]) -> set[int]:
    """The values that take a gradient: trained parameters and the float outputs of ops
    reading one that does."""
    need = {v for v, k in enumerate(trace.kinds)
            if k == "param" and trace.tensors[v].requires_grad}
    for n in forward:
        if any(v in need for v in n.inputs) and np.dtype(trace.dtypes[n.outputs[0]]).kind == "f":
            need.update(n.outputs)
    return need


def same_program(a: Program, b: Program) -> bool:
    """Whether two programs run the same kernels over the same values, of the same shapes
    and dtypes, and differentiate the same ones: then their liveness is the same."""
    ta, tb = a.trace, b.trace
    return (ta.shapes == tb.shapes and ta.dtypes == tb.dtypes and ta.kinds == tb.kinds
            and a.grad_values == b.grad_values and len(a.forward) == len(b.forward)
            and all(type(n.fn) is type(m.fn) and n.inputs == m.inputs
                    and n.outputs == m.outputs for n, m in zip(a.forward, b.forward)))


def copy_hints(source: list[Node], target: list[Node]) -> None:
    """Give each kernel of `target` the hints its counterpart in `source` has."""
    for n, m in zip(source, target):
        if isinstance(n.fn, Kernel):
            m.fn.dead_inputs = n.fn.dead_inputs
            m.fn.outputs_kept = n.fn.outputs_kept
            m.fn.inputs_kept = n.fn.inputs_kept


# The hints that may change which values a kernel keeps, and so the liveness (see Kernel)
LIVENESS_HINTS = frozenset({"dead_inputs", "outputs_kept"})


def give_hints(forward: list[Node], live: Liveness) -> bool:
    """Tell each kernel what the plan knows of its values' lifetimes (see Kernel); whether
    some kernel reads a hint it was given that changes what it keeps."""
    read = False
    for t, n in enumerate(forward):
        fn = n.fn
        if not isinstance(fn, Kernel):
            continue
        fn.dead_inputs = frozenset(i for i, v in enumerate(n.inputs) if live.dies_at(v, t))
        fn.outputs_kept = frozenset(i for i, v in enumerate(n.outputs)
                                    if live.kept_by_another(v, n))
        fn.inputs_kept = frozenset(i for i, v in enumerate(n.inputs)
                                   if live.alive_throughout(v))
        hints = LIVENESS_HINTS if fn.reads_hints is None else fn.reads_hints & LIVENESS_HINTS
        read = read or any(getattr(fn, hint) for hint in hints)
    return read
