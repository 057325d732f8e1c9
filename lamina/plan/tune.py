"""Tuning: time interchangeable kernels on the real shapes and keep the fastest."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lamina import allocator

if TYPE_CHECKING:
    from lamina.plan.program import Program

# How long a split or whole step runs untimed before each turn of its timing (see
# split_over_whole).
SETTLE = 0.1
# How much faster than the op's default kernel (its first variant) another must time to
# be kept; timings of one step vary by a few percent from round to round.
VARIANT_MARGIN = 0.03


def tune_variants(program: Program, rounds: int = 7, budget: float = 20.0) -> None:
    """Pick each kernel's fastest variant by timing the whole step on the traced batch: a
    kernel also sets the layout its neighbours read and the memory the step allocates,
    which the op timed alone does not show. Ops of one kind on inputs of one shape (a
    ResNet's repeated blocks) take one choice, timed together; one choice at a time, the
    others as chosen so far. Each round times every variant back to back, in an order
    that alternates, and a variant's score is its median time relative to the default's in
    the same round: the machine's speed drifts over seconds, and a minimum over rounds
    compares whichever variant met the fastest moment. Rounds shrink (to 3 at least) so
    that tuning takes about `budget` seconds where steps are long; past the budget, the
    groups left (the smallest: the largest go first) keep their default kernels."""
    arrays = [program.trace.arrays[v] for v in program.trace.inputs]
    params = [p for _, p in program.params]

    def step_seconds() -> float:
        return timed_step(program.run, arrays, params)

    step_seconds()  # allocate the buffers; warm the caches
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for n in program.forward:
        if len(getattr(n.fn, "variants", ())) >= 2:
            key = (type(n.fn), tuple(n.fn.variants),
                   tuple(program.trace.shapes[v] for v in n.inputs))
            groups.setdefault(key, []).append(n.fn)
    trials = sum(len(fns[0].variants) for fns in groups.values())
    if trials:
        rounds = max(3, min(rounds, int(budget / max(step_seconds(), 1e-6) / trials)))
    start = time.perf_counter()
    for fns in sorted(groups.values(), key=len, reverse=True):
        if time.perf_counter() - start > budget:
            break
        variants = fns[0].variants
        times: dict[str, list[float]] = {v: [] for v in variants}
        for r in range(rounds):
            for variant in (variants if r % 2 == 0 else variants[::-1]):
                for fn in fns:  # each is timed right after a switch, alike
                    fn.variant = variant
                times[variant].append(step_seconds())
        default = variants[0]
        relative = {v: statistics.median(t / d for t, d in zip(ts, times[default]))
                    for v, ts in times.items()}
        chosen = pick(relative, default, VARIANT_MARGIN)
        for fn in fns:
            fn.variant = chosen


def copy_variants(source: Program, target: Program) -> None:
    """Give each kernel of `target` the variant its counterpart in `source` chose: a
    program of the same kernels on the same shapes (Program.twin) needs no tuning."""
    for n, m in zip(source.forward, target.forward):
        if len(getattr(n.fn, "variants", ())) >= 2:
            m.fn.variant = n.fn.variant


def split_over_whole(seconds: Callable[[Any, float], float], split: Any, whole: Any,
                     rounds: int = 4) -> float:
    """A split step's time over the whole step's: the median of each round's ratio, the
    two taking turns in an order that alternates, the split first in the first round;
    `seconds(runner, settle=...)` times one. The machine's speed drifts over seconds, and
    timed once each, one after the other, a slow moment decided between them. Each drops
    its buffers after its turn and malloc gives the freed memory back: the two never hold
    a step's activations at once, even in different threads' arenas, whose free memory
    the other's threads cannot reuse (a turn's first step, untimed, makes them again)."""
    ratios = []
    for r in range(rounds):
        times = {}
        for name, runner in (("split", split), ("whole", whole))[:: -1 if r % 2 else 1]:
            # Both run untimed for SETTLE seconds first. After the whole step's BLAS
            # calls, OpenBLAS's idle threads spin for up to 0.1 s on the cores that the
            # split's threads need; and a step's first steps after its buffers are made
            # run slower than its steady state. Settling the split alone timed the whole
            # step in those: a CNN whose split runs slower in a training loop timed even.
            times[name] = seconds(runner, settle=SETTLE)
            runner.release_memory()
            allocator.give_back_freed_memory()
        ratios.append(times["split"] / times["whole"])
    return statistics.median(ratios)


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
