"""A step split over threads: each slice of the batch runs its own program on its own
thread, BLAS single-threaded, and the plan adds up what the slices give.

Why: NumPy runs each elementwise kernel on one core and each GEMM on all of them, and
between GEMMs the BLAS threads spin, so a second Python thread gains nothing. With BLAS
held to one thread, slices of the batch run side by side from end to end: the pooling,
im2col and activations that ran on one core now run on all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina import parallel
from lamina.autograd.delivery import accumulate_grad
from lamina.autograd.grad_mode import no_grad
from lamina.autograd.tensor import Tensor
from lamina.plan.program import Program
from lamina.plan.trace import TraceError
from lamina.plan.verify import eval_mode, preserved
from lamina.thread_pools import blas_single_threaded

# A random op of a split step: its step index, its batch axis, its rows in every slice
# along that axis, and the shape of its draw for the whole batch.
RandomOp = tuple[int, int, list[int], tuple[int, ...]]


def require_threadpoolctl() -> None:
    """Raise ImportError with the fix when threadpoolctl, which sets BLAS threads, is missing."""
    try:
        import threadpoolctl  # noqa: F401
    except ImportError as err:
        raise ImportError("plan: threads > 1 runs BLAS single-threaded inside each thread, "
                          "which needs threadpoolctl; pip install threadpoolctl (it comes "
                          "with lamina[train])") from err


def slices(arrays: Sequence[Any], edges: list[tuple[int, int]]) -> list[list[Any]]:
    """Each slice's rows of every batch array (views, not copies)."""
    return [[a[lo:hi] for a in arrays] for lo, hi in edges]


class Split:
    """The programs of one batch signature's slices and how their results combine.

    A training step's loss is the slices' losses weighted by `weights` (each slice's
    share of the batch for a mean, 1 for a sum); each program seeds its backward with its
    weight, so the parameters' gradients are plain sums. Outputs join along axis 0.
    """

    # run's results are arrays of their own (joined copies), not views of the programs'
    # buffers that the next run overwrites: the plan hands them out as they are.
    fresh_results = True

    def __init__(self, programs: list[Program], edges: list[tuple[int, int]],
                 weights: list[float], train: bool, random: list[RandomOp]) -> None:
        self.programs, self.edges, self.weights = programs, edges, weights
        self.train, self.random = train, random  # random: what splittable_ops returned
        for program, w in zip(programs, weights):
            program.loss_weight = w
            program.collected = {} if train else None

    def run(self, arrays: Sequence[Any], scale: float = 1.0) -> tuple[Any, ...]:
        parts = slices(arrays, self.edges)
        self._draw()
        with blas_single_threaded():
            outs = parallel.run_all([lambda p=p, part=part: p.run(part, scale)
                                     for p, part in zip(self.programs, parts)])
        if self.train:
            self._sum_grads()
            loss = sum(w * out[0] for w, out in zip(self.weights, outs))
            return (np.asarray(loss, outs[0][0].dtype),
                    *(np.concatenate(o) for o in zip(*(out[1:] for out in outs))))
        return tuple(np.concatenate(o) for o in zip(*outs))

    def release_memory(self) -> None:
        """Each slice's Program.release_memory."""
        for program in self.programs:
            program.release_memory()

    def _draw(self) -> None:
        """Draw each random op's numbers for the whole batch here, in the order eager mode
        draws them, and hand each slice its part along the op's batch axis: the masks are
        eager's, whatever order the threads run in. Each slice's kernel lets go of its part
        as it reads it (kernels.elementwise.DrawsAhead), so the whole draw is freed once
        every slice has read."""
        for k, axis, rows, whole in self.random:
            fns = [program.forward[k].fn for program in self.programs]
            drawn = fns[0].draw_batch(whole)
            for fn, lo, hi in zip(fns, np.cumsum([0, *rows[:-1]]), np.cumsum(rows)):
                fn.drawn = drawn[(slice(None),) * axis + (slice(lo, hi),)]

    def _sum_grads(self) -> None:
        """Each parameter's gradient: the slices' summed into the first slice's array
        (which its tensor then owns), so the sums take no memory beyond what the slices
        hold. Where that array is not the gradient's alone (an op may hand one array to
        several inputs, or a view), a copy takes the sum."""
        given: set[int] = set()
        first = self.programs[0].collected
        holders = Counter(id(g) for _, g in first.values())
        sums = []
        for key, (p, g) in first.items():
            alone = holders[id(g)] == 1 and g.flags.owndata and g.flags.writeable
            sums.append((p, g if alone else g.copy(),
                         [program.collected.pop(key)[1] for program in self.programs[1:]]))
        add_up([(total, others) for _, total, others in sums])
        for p, total, _ in sums:
            accumulate_grad(p, total, given)
        for program in self.programs:
            program.collected.clear()


def add_up(sums: list[tuple[Any, list[Any]]]) -> None:
    """total += each of others, for every (total, others): a memory-bound pass over all
    the parameters' gradients, cut into one range of their elements laid end to end per
    thread (one handoff to the pool for all of them). Arrays that do not all lie flat
    and alike, and sums under two pieces' worth, are summed whole, on this thread."""
    threads = min(parallel.get_num_threads(),
                  sum(total.size for total, _ in sums) // parallel.MIN_PIECE)
    flat = []
    for total, others in sums:
        if threads > 1 and total.flags.c_contiguous and all(
                o.flags.c_contiguous and o.shape == total.shape for o in others):
            flat.append((total.reshape(-1), [o.reshape(-1) for o in others]))
        else:
            for other in others:
                total += other
    if not flat:
        return
    sizes = [total.size for total, _ in flat]

    def add(share: list[tuple[int, int, int]]) -> None:
        for i, lo, hi in share:
            total, others = flat[i]
            for other in others:
                total[lo:hi] += other[lo:hi]

    parallel.run_all([lambda s=share: add(s)
                      for share in parallel.ranges(sizes, threads)])


def splittable_ops(programs: list[Program], rows: list[int]) -> list[list[RandomOp]]:
    """Refuse ops whose result on a slice is not that slice of their result on the batch.
    Returns the ways to read the random ops, the likeliest first: in each, every random op
    with its batch axis, one along which each slice's draw is its rows (`rows`) long and
    off which the slices' shapes agree (else their draws cannot be parts of one draw).
    That is axis 0 for most ops, 1 for a time-major recurrent net's (an nn.LSTM's dropout
    between layers); where both fit (as many steps as rows), the check against the eager
    step tells which is right."""
    candidates = []
    for k, n in enumerate(programs[0].forward):
        if getattr(n.fn, "mixes_batch", False):
            raise TraceError(f"plan: threads > 1 splits the batch, but {n.name}#{n.index} "
                             "computes statistics over the whole batch; compile with "
                             "threads=1 (or put the layer in eval mode)")
        if not getattr(n.fn, "draws_random", False):
            continue
        if not hasattr(n.fn, "draw_batch"):
            raise TraceError(f"plan: threads > 1 splits the batch, but {n.name}#{n.index} "
                             "draws random numbers and has no plan kernel that takes them "
                             "drawn for the whole batch; compile with threads=1")
        if any(len(p.forward) <= k or p.forward[k].name != n.name for p in programs):
            raise TraceError(f"plan: the batch's slices traced different ops at step {k}; "
                             "compile with threads=1")
        shapes = [tuple(p.trace.shapes[p.forward[k].outputs[0]]) for p in programs]
        axes = _batch_axes(shapes, rows)
        if not axes:
            raise TraceError(f"plan: threads > 1 splits the batch, but {n.name}#{n.index} "
                             f"draws random numbers over shapes {shapes} in slices of "
                             f"{rows} rows, which are not parts of one batch; compile with "
                             "threads=1")
        candidates.append([(k, axis, rows,
                            shapes[0][:axis] + (sum(rows),) + shapes[0][axis + 1:])
                           for axis in axes])
    return [[ops[min(i, len(ops) - 1)] for ops in candidates]
            for i in range(max(map(len, candidates), default=1))]


def _batch_axes(shapes: list[tuple[int, ...]], rows: list[int]) -> list[int]:
    """The axes along which every shape is its slice's rows long and off which the shapes
    agree."""
    return [axis for axis in range(min(len(s) for s in shapes))
            if len({s[:axis] + s[axis + 1:] for s in shapes}) == 1
            and all(s[axis] == r for s, r in zip(shapes, rows))]


def loss_weights(step: Any, model: Any, arrays: Sequence[Any], edges: list[tuple[int, int]],
                 random: bool, known: tuple[float, list[float]] | None = None) -> list[float]:
    """Each slice's weight in the loss: its share of the batch if the loss is a mean over
    rows, 1 if a sum; found by evaluating the loss (`step(*tensors)[0]`) on the batch and
    its slices (in eval mode if the model draws random numbers: the batch and its slices
    would draw different masks), or, where nothing is drawn, from `known`: the batch's
    loss and the slices' as the eager check and the traces computed them."""
    if known is not None and not random:
        whole, parts = known
    else:
        with preserved(model), no_grad(), eval_mode(model, random):
            whole = float(step(*[Tensor(a) for a in arrays])[0].array)
            parts = [float(step(*[Tensor(a) for a in part])[0].array)
                     for part in slices(arrays, edges)]
    n = edges[-1][1]
    for weights in ([(hi - lo) / n for lo, hi in edges], [1.0] * len(edges)):
        if np.isclose(whole, np.dot(weights, parts), rtol=1e-4, atol=1e-6):
            return weights
    raise TraceError(f"plan: threads={len(edges)} splits the batch, but the loss is neither "
                     f"a mean nor a sum over its rows (batch {whole:.6g}, slices "
                     f"{', '.join(f'{p:.6g}' for p in parts)}); compile with threads=1")
