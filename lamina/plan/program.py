"""A compiled program: one trace, pruned, ordered, with liveness and static buffer slots.

Timeline: forward node k runs at time k, backward node j at time F + j. A value is live
from the step that makes it to the last step that reads it, including a backward step
whose op kept it (found by looking for the value's memory among the op's attributes) and
every view made of it. Outputs of ops that can write into a given array (`supports_out`)
get a slot; a slot is handed to the next value of the same shape and dtype once its
value is dead, and an elementwise op may write straight over an input it reads last.
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict, deque
from typing import Any

import numpy as np

from lamina.autograd.engine import accumulate_grad
from lamina.functions.activation import ReLU
from lamina.functions.conv import Conv, out_size
from lamina.functions.conv_pool import ConvMaxPool, fusable
from lamina.functions.pooling import MaxPool
from lamina.plan.emit import emit
from lamina.plan.trace import Node, Trace

# How much faster than the op's default kernel (its first variant) another must time to
# be kept; timings of one step vary by a few percent from round to round.
VARIANT_MARGIN = 0.03


class Program:
    def __init__(self, trace: Trace, train: bool, tune: bool = False) -> None:
        self.trace, self.train = trace, train
        self.loss = trace.outputs[0] if train else None
        self.params = [(v, trace.tensors[v]) for v, kind in enumerate(trace.kinds)
                       if kind == "param"]  # (value, tensor): read afresh at every run
        kept = _prune(trace.nodes, trace.outputs, len(trace.kinds))
        self.pruned = [n for n in trace.nodes if n not in kept]
        self.rewrites: list[str] = []
        nodes = self._fuse_conv_pool(self._pool_before_relu(kept))
        self._crop_for_pool(nodes)
        self.forward = _toposort(nodes, trace)
        self.grad_values = self._needs_grad() if train else set()
        # An op is in backward where its (float) outputs take gradient: a comparison of a
        # value that does, which gives booleans, is not.
        self.backward = [n for n in reversed(self.forward) if n.outputs[0] in self.grad_values]
        in_backward = {id(n) for n in self.backward}
        for n in self.forward:
            n.fn.needs_input_grad = tuple(v in self.grad_values and id(n) in in_backward
                                          for v in n.inputs)
            n.fn.planned = True
        # What each op keeps depends on the hints it is given, so the forward is probed
        # again after each round of hints, and liveness is read off the probe's arrays.
        self._analyse(self._probe())
        kept_by: dict[int, set[int]] = defaultdict(set)  # value -> nodes keeping it
        for n in self.backward:
            for v in self.kept_for_backward[id(n)]:
                kept_by[v].add(id(n))
        for t, n in enumerate(self.forward):
            n.fn.dead_inputs = frozenset(
                i for i, v in enumerate(n.inputs) if self._dies_at(v, t))
            n.fn.outputs_kept = frozenset(
                i for i, v in enumerate(n.outputs) if kept_by[v] - {id(n)})
            n.fn.inputs_kept = frozenset(
                i for i, v in enumerate(n.inputs) if self._alive_throughout(v))
        self._analyse(self._probe())
        self.slots, self.slot_meta = self._assign_slots()
        self.frees = self._frees()
        self.buffers: list[Any] | None = None
        self.after_forward: Any = None  # a callable run between forward and backward
        # A program running one slice of a split batch (see split.Split) seeds backward
        # with its slice's weight in the loss and keeps its parameters' gradients in
        # `collected` (tensor id -> (tensor, array)) for the plan to sum: programs on
        # other threads must not write one tensor's .grad at once.
        self.loss_weight = 1.0  # the gradient backward starts from (a split slice's share)
        self.collected: dict[int, tuple[Any, Any]] | None = None
        if tune:
            self._tune()

    # -- rewrites ---------------------------------------------------------------------------
    def _pool_before_relu(self, nodes: list[Node]) -> list[Node]:
        """max_pool(relu(x)) -> relu(max_pool(x)) where nothing else reads relu(x).

        Equal bit for bit, gradients included: max commutes with any nondecreasing
        function, and where a window's max is <= 0 both orders pass no gradient. The ReLU
        then runs on the pooled array, a kernel-area times smaller."""
        trace = self.trace
        readers, maker = _wiring(nodes)
        out = list(nodes)
        for pool in nodes:
            relu = maker.get(pool.inputs[0])
            if not (isinstance(pool.fn, MaxPool) and relu is not None
                    and isinstance(relu.fn, ReLU) and readers[pool.inputs[0]] == 1
                    and pool.inputs[0] not in trace.outputs):
                continue
            pooled = len(trace.kinds)  # a new value: the pooled pre-activation
            for column, value in ((trace.kinds, "op"), (trace.tensors, None),
                                  (trace.shapes, trace.shapes[pool.outputs[0]]),
                                  (trace.dtypes, trace.dtypes[pool.outputs[0]]),
                                  (trace.arrays, None)):
                column.append(value)
            out[out.index(relu)] = Node(pool.fn, [relu.inputs[0]], [pooled], relu.index)
            out[out.index(pool)] = Node(relu.fn, [pooled], pool.outputs, pool.index)
            self.rewrites.append(f"{pool.name}#{pool.index}(ReLU#{relu.index}(x)) -> "
                                 f"ReLU(MaxPool(x))")
        return out

    def _fuse_conv_pool(self, nodes: list[Node]) -> list[Node]:
        """max_pool(conv(x, W, b)) -> ConvMaxPool(x, W, b) where nothing else reads the
        convolution's output and the fusion pays (see functions/conv_pool.py)."""
        trace = self.trace
        readers, maker = _wiring(nodes)
        out = list(nodes)
        for pool in nodes:
            conv = maker.get(pool.inputs[0])
            if not (conv is not None and len(conv.inputs) > 1 and readers[pool.inputs[0]] == 1
                    and pool.inputs[0] not in trace.outputs
                    and isinstance(trace.arrays[pool.inputs[0]], np.ndarray)
                    and fusable(conv.fn, pool.fn, trace.shapes[conv.inputs[1]])):
                continue
            out[out.index(conv)] = Node(ConvMaxPool(conv.fn, pool.fn), conv.inputs,
                                        pool.outputs, conv.index)
            out.remove(pool)
            self.rewrites.append(f"{pool.name}({conv.name}#{conv.index}(x)) -> ConvMaxPool(x)")
        return out

    def _crop_for_pool(self, nodes: list[Node]) -> None:
        """A convolution read only by an unpadded max pooling that never reads its last
        rows or columns (an 11x11 output pooled 2x2 to 5x5) computes only what is read."""
        trace = self.trace
        readers, maker = _wiring(nodes)
        for pool in nodes:
            v = pool.inputs[0]
            conv = maker.get(v)
            if not (isinstance(pool.fn, MaxPool) and not any(pool.fn.p) and conv is not None
                    and type(conv.fn) is Conv and readers[v] == 1 and v not in trace.outputs
                    and isinstance(trace.arrays[v], np.ndarray)):
                continue
            shape = trace.shapes[v]
            size = (1, shape[2]) if pool.fn.nd == 1 else shape[2:]
            read = tuple((out_size(n, k, s, 0, 1) - 1) * s + k
                         for n, k, s in zip(size, pool.fn.k, pool.fn.s))
            if read == tuple(size):
                continue
            conv.fn.crop = read
            trace.shapes[v] = (*shape[:2], *read[2 - pool.fn.nd:])
            self.rewrites.append(f"{conv.name}#{conv.index} computes {read[0]}x{read[1]} of "
                                 f"its {size[0]}x{size[1]} outputs (the rest unpooled)")

    # -- analysis ---------------------------------------------------------------------------
    def _probe(self) -> list[Any]:
        """Run the forward on the trace's own arrays, so every op holds what it would hold
        in a replay (the caller restores RNG and buffers). Returns the values' arrays."""
        env = list(self.trace.arrays)
        for v, p in self.params:
            env[v] = p.array
        for n in self.forward:
            n.fn.out_buffers = None
            ys = n.fn.forward(*[env[v] for v in n.inputs])
            for v, y in zip(n.outputs, ys if isinstance(ys, tuple) else (ys,)):
                env[v] = y
        return env

    def _tune(self, rounds: int = 7) -> None:
        """Pick each op's fastest variant by timing the whole step on the traced batch: a
        kernel also sets the layout its neighbours read and the memory the step allocates,
        which the op timed alone does not show. One op at a time, the others as chosen so
        far. Each round times every variant back to back, in an order that alternates, and
        a variant's score is its median time relative to the default's in the same round:
        this machine's speed drifts by 10-40% over seconds, and a minimum over rounds
        compares whichever variant met the fastest moment."""
        arrays = [self.trace.arrays[v] for v in self.trace.inputs]
        params = [p for _, p in self.params]

        def step_seconds() -> float:
            return timed_step(self.run, arrays, params)

        step_seconds()  # allocate the buffers; warm the caches
        for n in self.forward:
            fn = n.fn
            if len(fn.variants) < 2:
                continue
            times: dict[str, list[float]] = {v: [] for v in fn.variants}
            for r in range(rounds):
                for variant in (fn.variants if r % 2 == 0 else fn.variants[::-1]):
                    fn.variant = variant  # each is timed right after a switch, alike
                    times[variant].append(step_seconds())
            default = fn.variants[0]
            relative = {v: statistics.median(t / d for t, d in zip(ts, times[default]))
                        for v, ts in times.items()}
            fn.variant = pick(relative, default, VARIANT_MARGIN)

    def _analyse(self, arrays: list[Any]) -> None:
        self.arrays = arrays
        self.kept_for_backward = {id(n): _retained(n, arrays) for n in self.backward}
        self.last_use = self._liveness()

    def _alive_throughout(self, v: int) -> bool:
        """Whether value v lives through the whole step anyway: a parameter, the batch, a
        requested output, or a view of one."""
        trace = self.trace
        if trace.kinds[v] in ("param", "input"):
            return True
        return any(u == v or _shares(self.arrays[u], self.arrays[v]) for u in trace.outputs)

    def _dies_at(self, v: int, t: int) -> bool:
        """Whether step t is the last to read value v and every value sharing its memory
        (a view of it, or what it views), so the op at t may overwrite it."""
        trace, outputs = self.trace, set(self.trace.outputs)
        if trace.kinds[v] != "op" or self.last_use.get(v) != t or v in outputs:
            return False
        return not any(u != v and (u in outputs or self.last_use.get(u, t) > t)
                       and _shares(self.arrays[u], self.arrays[v])
                       for u in range(len(trace.kinds)) if trace.kinds[u] != "const")

    def _needs_grad(self) -> set[int]:
        kinds, tensors = self.trace.kinds, self.trace.tensors
        need = {v for v, k in enumerate(kinds) if k == "param" and tensors[v].requires_grad}
        for n in self.forward:
            if any(v in need for v in n.inputs) and np.dtype(self.trace.dtypes[n.outputs[0]]
                                                             ).kind == "f":
                need.update(n.outputs)
        return need

    def _liveness(self) -> dict[int, int]:
        """Last step reading each op value (a requested output lives to the end)."""
        end = len(self.forward) + len(self.backward)
        last: dict[int, int] = {}
        for t, n in enumerate(self.forward):
            for v in n.outputs:
                last.setdefault(v, t)
            for v in n.inputs:
                last[v] = max(last.get(v, t), t)
        for j, n in enumerate(self.backward):
            for v in self.kept_for_backward[id(n)]:
                last[v] = max(last.get(v, 0), len(self.forward) + j)
        for v in self.trace.outputs:
            last[v] = end
        # A view keeps the array it views alive: walk back so chains of views propagate.
        for n in reversed(self.forward):
            for out in n.outputs:
                for v in n.inputs:
                    if _shares(self.arrays[out], self.arrays[v]):
                        last[v] = max(last.get(v, 0), last[out])
        return last

    def _assign_slots(self) -> tuple[dict[int, int], list[tuple[tuple[int, ...], Any]]]:
        """Static buffers for outputs of ops that write into a given array (interval colouring)."""
        free: dict[tuple[Any, ...], list[int]] = defaultdict(list)
        meta: list[tuple[tuple[int, ...], Any]] = []
        slots: dict[int, int] = {}
        releases: dict[int, list[int]] = defaultdict(list)  # step -> slots free after it
        outputs = set(self.trace.outputs)
        for t, n in enumerate(self.forward):
            fn = n.fn
            in_place = []
            if getattr(fn, "elementwise", False):  # may overwrite an input it reads last
                in_place = [slots[v] for v in n.inputs if v in slots and self.last_use[v] == t]
            for v in n.outputs:
                if not getattr(fn, "supports_out", False) or v in outputs:
                    continue
                key = (self.trace.shapes[v], np.dtype(self.trace.dtypes[v]).str)
                same = [s for s in in_place if meta[s] == (key[0], np.dtype(key[1]))]
                if same:
                    s = same[0]
                    in_place.remove(s)
                    releases[t] = [r for r in releases[t] if r != s]
                elif free[key]:
                    s = free[key].pop()
                else:
                    s = len(meta)
                    meta.append((key[0], np.dtype(key[1])))
                slots[v] = s
                releases[self.last_use[v]].append(s)
            for s in releases.pop(t, []):
                shape, dtype = meta[s]
                free[(shape, dtype.str)].append(s)
        return slots, meta

    def _frees(self) -> dict[int, list[int]]:
        """Values to drop after each step, so unpooled arrays are freed at their last use."""
        frees: dict[int, list[int]] = defaultdict(list)
        outputs = set(self.trace.outputs)
        for v, t in self.last_use.items():
            if v not in outputs and self.trace.kinds[v] == "op":
                frees[t].append(v)
        return frees

    # -- running ----------------------------------------------------------------------------
    def run(self, arrays: list[Any], scale: float = 1.0) -> tuple[Any, ...]:
        """Run forward (and backward, for a training program) on the batch's arrays; the
        gradients are those of `scale` times the loss."""
        if self.buffers is None:
            self._prepare()
        return self.step(arrays, scale)

    def _prepare(self) -> None:
        """Allocate the slots and generate the step's code (see emit), once."""
        self.buffers = [np.empty(shape, dtype) for shape, dtype in self.slot_meta]
        for n in self.forward:
            n.fn.out_buffers = [self.buffers[self.slots[v]] if v in self.slots else None
                                for v in n.outputs]
        self.step, self.source = emit(self)

    def _param_grad(self, p: Any, g: Any, given: set[int]) -> None:
        if self.collected is None:
            accumulate_grad(p, g, given)
            return
        have = self.collected.get(id(p))
        self.collected[id(p)] = (p, g if have is None else have[1] + g)

    # -- reports ----------------------------------------------------------------------------
    def memory(self) -> dict[str, int]:
        """Bytes of intermediate arrays: all at once, the live peak, and the pooled slots."""
        trace = self.trace
        nbytes = {v: int(np.prod(trace.shapes[v])) * np.dtype(trace.dtypes[v]).itemsize
                  for n in self.forward for v in n.outputs}
        grad_bytes = sum(nbytes.get(v, 0) for v in self.grad_values if v in nbytes)
        steps = len(self.forward) + len(self.backward)
        born = {v: t for t, n in enumerate(self.forward) for v in n.outputs}
        live = np.zeros(steps + 1, np.int64)
        for v, b in born.items():
            live[b:self.last_use[v] + 1] += nbytes[v]
        pooled = sum(int(np.prod(s)) * d.itemsize for s, d in self.slot_meta)
        return {"values": len(nbytes), "bytes_without_reuse": sum(nbytes.values()) + grad_bytes,
                "bytes_with_reuse": int(live.max()) if len(live) else 0,
                "pooled_buffer_bytes": pooled, "pooled_buffers": len(self.slot_meta)}

    def describe(self) -> str:
        trace = self.trace

        def name(v: int) -> str:
            kind = trace.kinds[v]
            return f"{kind}{v}" if kind != "op" else f"v{v}"

        lines = [f"forward ({len(self.forward)} ops, {len(self.pruned)} pruned):"]
        for t, n in enumerate(self.forward):
            outs = ", ".join(f"{name(v)} {tuple(trace.shapes[v])}"
                             + (f" [slot {self.slots[v]}]" if v in self.slots else "")
                             for v in n.outputs)
            frees = " ".join(name(v) for v in self.frees.get(t, ()))
            kernel = f" <{n.fn.variant}>" if n.fn.variant else ""
            lines.append(f"  {t:3d} {n.name:<14} {', '.join(map(name, n.inputs))} -> {outs}"
                         + kernel + (f"   frees {frees}" if frees else ""))
        if self.pruned:
            lines.append("pruned: " + ", ".join(f"{n.name}#{n.index}" for n in self.pruned))
        if self.rewrites:
            lines.append("rewritten: " + ", ".join(self.rewrites))
        if self.train:
            lines.append(f"backward ({len(self.backward)} ops):")
            for j, n in enumerate(self.backward):
                targets = [name(v) for v, need in zip(n.inputs, n.fn.needs_input_grad) if need]
                lines.append(f"  {len(self.forward) + j:3d} {n.name + '.backward':<23} "
                             f"-> d/d {', '.join(targets)}")
        return "\n".join(lines)


def pick(seconds: dict[str, float], default: str, margin: float) -> str:
    """The fastest choice if it beats `default` by more than `margin` (a fraction of the
    default's time), else the default: a difference within the noise of the timing is
    no reason to leave the default, and a choice picked by noise differs run to run."""
    fastest = min(seconds, key=seconds.__getitem__)
    return fastest if seconds[fastest] < (1 - margin) * seconds[default] else default


def timed_step(run: Any, arrays: list[Any], params: list[Any]) -> float:
    """Seconds one `run(arrays)` takes, gradients cleared first as after zero_grad (so they
    are made, not accumulated)."""
    for p in params:
        p.grad = None
    start = time.perf_counter()
    run(arrays)
    return time.perf_counter() - start


def _wiring(nodes: list[Node]) -> tuple[dict[int, int], dict[int, Node]]:
    """How many nodes read each value, and the node making each."""
    readers: dict[int, int] = defaultdict(int)
    for n in nodes:
        for v in n.inputs:
            readers[v] += 1
    return readers, {v: n for n in nodes for v in n.outputs}


def _prune(nodes: list[Node], outputs: list[int], n_values: int) -> list[Node]:
    """Keep the nodes that some requested output depends on."""
    maker = {v: n for n in nodes for v in n.outputs}
    wanted, stack, kept = set(outputs), list(outputs), set()
    while stack:
        n = maker.get(stack.pop())
        if n is None or id(n) in kept:
            continue
        kept.add(id(n))
        for v in n.inputs:
            if v not in wanted:
                wanted.add(v)
                stack.append(v)
    return [n for n in nodes if id(n) in kept]


def _toposort(nodes: list[Node], trace: Trace) -> list[Node]:
    """Kahn's algorithm: run a node once every node making its inputs has run."""
    maker = {v: n for n in nodes for v in n.outputs}
    indegree = {id(n): len({maker[v].index for v in n.inputs if v in maker}) for n in nodes}
    users: dict[int, list[Node]] = defaultdict(list)
    for n in nodes:
        for p in {id(maker[v]): maker[v] for v in n.inputs if v in maker}.values():
            users[id(p)].append(n)
    ready = deque(n for n in nodes if indegree[id(n)] == 0)
    order = []
    while ready:
        n = ready.popleft()
        order.append(n)
        for u in users[id(n)]:
            indegree[id(u)] -= 1
            if indegree[id(u)] == 0:
                ready.append(u)
    assert len(order) == len(nodes), "a trace is acyclic by construction"
    return order


def _retained(n: Node, arrays: list[Any]) -> set[int]:
    """The node's input and output values whose memory its op keeps for backward."""
    kept = [a for a in _arrays_in(vars(n.fn)) if a is not None]
    return {v for v in (*n.inputs, *n.outputs)
            if any(_shares(a, arrays[v]) for a in kept)}


def _arrays_in(obj: Any, depth: int = 0) -> list[Any]:
    if isinstance(obj, np.ndarray):
        return [obj]
    if depth > 2:
        return []
    if isinstance(obj, dict):
        return [a for k, v in obj.items() if k not in ("inputs", "out_buffers")
                for a in _arrays_in(v, depth + 1)]
    if isinstance(obj, (list, tuple)):
        return [a for v in obj for a in _arrays_in(v, depth + 1)]
    return []


def _shares(a: Any, b: Any) -> bool:
    return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.size > 0
            and b.size > 0 and np.may_share_memory(a, b))
