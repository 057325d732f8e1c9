"""Tuning: time interchangeable kernels on the real shapes and keep the fastest."""

from __future__ import annotations

import statistics
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lamina.plan.program import Program

# How much faster than the op's default kernel (its first variant) another must time to
# be kept; timings of one step vary by a few percent from round to round.
VARIANT_MARGIN = 0.03


def tune_variants(program: Program, rounds: int = 7) -> None:
    """Pick each kernel's fastest variant by timing the whole step on the traced batch: a
    kernel also sets the layout its neighbours read and the memory the step allocates,
    which the op timed alone does not show. One op at a time, the others as chosen so
    far. Each round times every variant back to back, in an order that alternates, and a
    variant's score is its median time relative to the default's in the same round: the
    machine's speed drifts over seconds, and a minimum over rounds compares whichever
    variant met the fastest moment."""
    arrays = [program.trace.arrays[v] for v in program.trace.inputs]
    params = [p for _, p in program.params]

    def step_seconds() -> float:
        return timed_step(program.run, arrays, params)

    step_seconds()  # allocate the buffers; warm the caches
    for n in program.forward:
        fn = n.fn
        variants = getattr(fn, "variants", ())
        if len(variants) < 2:
            continue
        times: dict[str, list[float]] = {v: [] for v in variants}
        for r in range(rounds):
            for variant in (variants if r % 2 == 0 else variants[::-1]):
                fn.variant = variant  # each is timed right after a switch, alike
                times[variant].append(step_seconds())
        default = variants[0]
        relative = {v: statistics.median(t / d for t, d in zip(ts, times[default]))
                    for v, ts in times.items()}
        fn.variant = pick(relative, default, VARIANT_MARGIN)


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
