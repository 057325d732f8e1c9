"""lamina.fused.numba_barrier: shares of one parallel region that meet after every step,
and that never deadlock where numba's pool runs fewer threads than shares."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None,
                                reason="numba is not installed (pip install 'lamina[fast]')")


@pytest.fixture(scope="module")
def kernel():
    """A kernel in the threaded recurrences' pattern: `parts` shares join, then at each of
    `steps` steps each share writes its slot of a row and reads the whole row the step
    before wrote (as a step reads all of h): what it read goes into seen[p, t]."""
    import numba

    from lamina.fused.numba_barrier import shares, wait

    @numba.njit(parallel=True)
    def run(parts, steps):
        rows = np.zeros((steps + 1, parts), np.int64)
        seen = np.full((parts, steps), -1, np.int64)
        taken = np.zeros((parts, 3), np.int64)  # each share's q0, q1 and whether together
        sync = np.zeros(4, np.int64)
        for p in numba.prange(parts):
            q0, q1, together = shares(sync, p, parts)
            taken[p, 0], taken[p, 1], taken[p, 2] = q0, q1, 1 if together else 0
            generation = 0
            for t in range(steps):
                for q in range(q0, q1):
                    seen[q, t] = rows[t].sum()
                    rows[t + 1, q] = (rows[t].sum() + q + 1) % 1000003
                if together:
                    generation = wait(sync, parts, generation)
        return rows, seen, taken

    return run


def _expected(parts, steps):
    """The rows and reads of the steps run one after another."""
    rows = np.zeros((steps + 1, parts), np.int64)
    seen = np.zeros((parts, steps), np.int64)
    for t in range(steps):
        for q in range(parts):
            seen[q, t] = rows[t].sum()
            rows[t + 1, q] = (rows[t].sum() + q + 1) % 1000003
    return rows, seen


def _agreed(taken):
    """All shares together, each its own, or one alone with all of them and the others
    idle: never two running the same share."""
    parts = len(taken)
    together = [[p, p + 1, 1] for p in range(parts)]
    alone = [[[0, parts, 0] if p == q else [p, p, 0] for p in range(parts)]
             for q in range(parts)]
    return taken.tolist() == together or taken.tolist() in alone


@pytest.mark.parametrize("parts", [1, 2])
def test_every_step_reads_all_of_the_step_before(kernel, parts):
    """Each share reads the whole row only once every share wrote it: a share that ran
    ahead of the barrier would read a sum short of the others' slots."""
    rows, seen, taken = kernel(parts, 2000)
    want_rows, want_seen = _expected(parts, 2000)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(seen, want_seen)
    assert _agreed(taken)


def test_fewer_threads_than_shares_run_alone_without_deadlock(kernel):
    """numba's pool on one thread runs the shares one after another: the first gives up
    waiting for the others and runs every share, the second then does nothing."""
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        rows, seen, taken = kernel(3, 50)
    finally:
        numba.set_num_threads(before)
    want_rows, want_seen = _expected(3, 50)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(seen, want_seen)
    assert taken.tolist() == [[0, 3, 0], [1, 1, 0], [2, 2, 0]]
