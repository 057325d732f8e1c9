"""Compiling a plan whose batch is split over threads: a program for each slice, checked
against the eager step, weighted in the loss, and, tuned, kept only where it times
faster than the whole step's program."""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lamina import allocator
from lamina.parallel import bounds
from lamina.plan.program import Program
from lamina.plan.split import Split, blas_single_threaded, loss_weights, slices, splittable_ops
from lamina.plan.trace import TraceError
from lamina.plan.tune import copy_variants, pick, split_over_whole, timed_step, tune_variants
from lamina.plan.verify import check_against_eager, eager_outcome, other_draws, preserved

if TYPE_CHECKING:
    from lamina.plan.plan import Plan

# How much faster than the whole step a split step must time to be kept: it pays what
# timing the plan alone does not show (two programs' buffers in the cache, an optimizer
# reading gradients summed from two threads); one timed just faster can run slower.
SPLIT_MARGIN = 0.05


def compile_split(plan: Plan, arrays: list[Any], n: int) -> Program | Split:
    """The programs for the batch's slices (n rows) as a Split; tuned, the split or the
    whole step's program, whichever times faster."""
    if any(np.ndim(a) == 0 or len(a) != n for a in arrays):
        raise ValueError(f"plan: threads={plan.threads} splits every batch array along "
                         f"axis 0, so they must agree there; got shapes "
                         f"{[np.shape(a) for a in arrays]}")
    edges = bounds(n, plan.threads)
    parts = slices(arrays, edges)
    # The second slice, of other values and other draws, is what the first's trace is
    # checked against, not a trace of perturbed values: one trace of the step fewer.
    first = plan._trace(parts[0])
    second = None
    if _other_values(parts[0], parts[1]):
        with other_draws():
            second = plan._trace(parts[1])
    programs = [plan._compile_one(parts[0], tune=False, first=first, other=second)]
    for i, part in enumerate(parts[1:], 1):  # compared with the first slice's program
        like = programs[0] if _shapes(part) == _shapes(parts[0]) else None
        programs.append(plan._compile_one(part, tune=False, like=like,
                                          first=second if i == 1 else None))
    readings = splittable_ops(programs, [hi - lo for lo, hi in edges])  # or refuses
    want = eager_outcome(plan, arrays) if plan.verify else None
    whole = None
    if plan.tune:
        # The whole step compiles before any slice runs: its trace and analysis hold a
        # whole batch's activations, as the eager step does, not on top of the slices'.
        # It is checked against the eager step's outcome, not a second eager step.
        whole = plan._compile_whole(arrays, want)
        whole.release_memory()
        allocator.give_back_freed_memory()
    # The eager check's loss and the traces' give the weights without running the model
    # again, where it draws nothing (else the batch and its slices draw apart).
    random = bool(readings[0])
    known = (float(want[0]), [p.trace.loss for p in programs]) if want and plan.train \
        else None
    weights = (loss_weights(plan.step_fn(), plan.model, arrays, edges, random, known)
               if plan.train else [1.0] * len(edges))
    allocator.give_back_freed_memory()  # the eager steps' (see the function)
    for i, ops in enumerate(readings):  # the first whose draws give eager's step
        split = Split(programs, edges, weights, plan.train, ops)
        if not plan.verify:
            break
        try:
            check_against_eager(plan, split.run, arrays, want)
            break
        except TraceError:
            if i == len(readings) - 1:
                raise
    if not plan.tune:  # tuned only now: a split refused above has cost no timing
        return split
    with blas_single_threaded(), preserved(plan.model):  # as the slices will run
        for program in programs:  # a slice's twin runs the same kernels on the same shapes
            if program.twin is not None:
                copy_variants(program.twin, program)
            else:
                tune_variants(program)
    # A step that is mostly GEMMs may run faster whole. Each turn of the two starts from
    # a trimmed heap (see split_over_whole).
    split.release_memory()
    allocator.give_back_freed_memory()
    seconds = functools.partial(step_seconds, plan, arrays=arrays)
    ratio = split_over_whole(seconds, split, whole)
    return split if pick({"whole": 1.0, "split": ratio}, "whole", SPLIT_MARGIN) == "split" \
        else whole


def step_seconds(plan: Plan, runner: Program | Split, arrays: list[Any], settle: float = 0.0,
                 rounds: int = 3) -> float:
    """The median of `rounds` steps, after running untimed for `settle` seconds. The
    median, not the minimum: a step whose time varies (BLAS threads woken for each of an
    LSTM's small GEMMs) runs at its typical time in a loop, not its best. The first step
    is never timed: it allocates the runner's buffers."""
    times: list[float] = []
    with preserved(plan.model):
        params = list(plan.model.parameters())
        timed_step(runner.run, arrays, params)
        start = time.perf_counter()
        while len(times) < rounds:
            seconds = timed_step(runner.run, arrays, params)
            if time.perf_counter() - start >= settle:
                times.append(seconds)
    return statistics.median(times)


def _shapes(arrays: Sequence[Any]) -> list[tuple[int, ...]]:
    return [np.shape(a) for a in arrays]


def _other_values(one: Sequence[Any], other: Sequence[Any]) -> bool:
    """Whether two slices of a batch (one dtype per array) have the same shapes and
    differ in some array's values (a batch of repeated rows does not: its slices are
    checked as one is alone)."""
    return (_shapes(one) == _shapes(other)
            and not all(np.array_equal(a, b) for a, b in zip(one, other)))
