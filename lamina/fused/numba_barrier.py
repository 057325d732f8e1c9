"""One parallel region for a whole recurrence: its shares meet at a barrier after every
step, instead of numba starting a parallel region a step. Re-exported through the
threaded kernels that use it (numba_threaded, numba_threaded_gru).

A step of a recurrence on the hidden units' shares needs all of the step before's h, so
its threads must meet between steps. As one region a step, each meeting is OpenMP's end
of a region and numba's launch of the next; where OpenMP's idle threads sleep soon
(lamina.thread_pools.OMP_SPIN_BESIDE_OPENBLAS, beside OpenBLAS's pool), the other thread
is often asleep by the launch and every step pays its wake-up. Here the shares enter one
region and meet at a barrier in shared memory, spinning on an atomic counter; a step
costs the barrier's cache-line round trip between the cores.

A barrier deadlocks unless every share runs on a thread of its own at once. OpenMP
gives numba's region a team of threads, and numba hands each a chunk of the range: with
fewer threads than shares, one thread would run two shares one after the other, the
first spinning forever for the second. So the shares first join (join): each checks in
and waits, a bounded number of spins, for all the others; if they do not all come, the
first to give up runs every share itself, step by step, and the others, once they come,
do nothing. The results are the same either way: each share's arithmetic is fixed by
its units, not by the thread that runs it.

The state is an int64 array of four zeros, one a kernel call: the shares' check-in
count, the mode they agreed on, and the barrier's arrival count and generation.
"""

from __future__ import annotations

import platform

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from lamina.fused.numba_cache import jit

JOINED, MODE, ARRIVED, GENERATION = 0, 1, 2, 3  # the state's slots
UNDECIDED, TOGETHER, ALONE = 0, 1, 2  # the modes
# How many times a share checks for the others before it gives up on them: about a
# millisecond, far longer than an OpenMP thread takes to start its share, far shorter
# than a whole recurrence.
JOIN_SPINS = 1 << 16
_X86 = platform.machine().lower() in ("x86_64", "amd64", "i686", "x86")

# Not inlined by numba (its IR-level inlining runs before the parallel passes, which
# could move a call they take for pure): LLVM inlines them later.
_called = jit(nogil=True, error_model="numpy")


def _slot(context, builder, signature, args):  # type: ignore[no-untyped-def]
    """A pointer to element args[1] of the int64 array args[0]."""
    aryty = signature.args[0]
    ary = context.make_array(aryty)(context, builder, args[0])
    return cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]], wraparound=False)


@intrinsic
def fetch_add(typingctx, ary, i, v):  # type: ignore[no-untyped-def]
    """ary[i] += v as one atomic step (sequentially consistent); the value before."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        return builder.atomic_rmw("add", _slot(context, builder, signature, args), value,
                                  "seq_cst")
    return types.int64(ary, i, v), codegen


@intrinsic
def load(typingctx, ary, i):  # type: ignore[no-untyped-def]
    """ary[i], read atomically (acquire): a loop that reads it sees other threads' writes,
    and everything they wrote before it."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        return builder.load_atomic(_slot(context, builder, signature, args), "acquire", 8)
    return types.int64(ary, i), codegen


@intrinsic
def compare_swap(typingctx, ary, i, old, new):  # type: ignore[no-untyped-def]
    """ary[i] = new if it holds old, atomically; whether it did."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        old_ = context.cast(builder, args[2], signature.args[2], types.int64)
        new_ = context.cast(builder, args[3], signature.args[3], types.int64)
        pair = builder.cmpxchg(_slot(context, builder, signature, args), old_, new_,
                               "seq_cst", "seq_cst")
        return builder.extract_value(pair, 1)
    return types.boolean(ary, i, old, new), codegen


@intrinsic
def relax(typingctx):  # type: ignore[no-untyped-def]
    """A spin loop's pause (x86's `pause`: the core's other thread and its power draw get
    the cycles); nothing elsewhere."""
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        if _X86:
            pause = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
            builder.call(pause, [])
        return context.get_dummy_value()
    return types.none(), codegen


@_called
def join(sync, parts):  # type: ignore[no-untyped-def]
    """A share checks in: TOGETHER where all `parts` shares run at once (each then runs
    its own, meeting at `wait`), ALONE for the one share that runs them all (the others
    did not come in time), UNDECIDED for the others then (they do nothing)."""
    fetch_add(sync, JOINED, 1)
    spins = 0
    while load(sync, JOINED) < parts and spins < JOIN_SPINS:
        relax()
        spins += 1
    if load(sync, JOINED) >= parts:
        compare_swap(sync, MODE, UNDECIDED, TOGETHER)
    elif compare_swap(sync, MODE, UNDECIDED, ALONE):
        return ALONE
    return TOGETHER if load(sync, MODE) == TOGETHER else UNDECIDED


@_called
def wait(sync, parts, generation):  # type: ignore[no-untyped-def]
    """The shares' meeting after a step: returns once all `parts` have come, with the
    generation for the next meeting. The last to come resets the count, then lets the
    others go; what each share wrote before it came is visible to all after."""
    if fetch_add(sync, ARRIVED, 1) == parts - 1:
        fetch_add(sync, ARRIVED, -parts)
        fetch_add(sync, GENERATION, 1)
    else:
        while load(sync, GENERATION) == generation:
            relax()
    return generation + 1


@_called
def shares(sync, p, parts):  # type: ignore[no-untyped-def]
    """Share p joins (join): the range of shares [q0, q1) it runs at every step (its own,
    all of them, or none) and whether it meets the others after each step."""
    mode = join(sync, parts)
    if mode == ALONE:
        return 0, parts, False
    if mode == TOGETHER:
        return p, p + 1, True
    return p, p, False
