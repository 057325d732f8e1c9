"""`Kernel`: an op as an execution plan runs it.

The ops in lamina.functions run eagerly and know nothing of plans. A plan lowers each
traced op to a kernel where one is registered for its class: a subclass of the op's class
(`class ReLUKernel(Kernel, ReLU)`) that shares the traced op's state and adds what only a
plan knows — the static buffers its outputs go into, which inputs die at this op (so it
may write over them), which of its outputs or inputs stay alive anyway (so keeping them
costs nothing), and interchangeable kernels (`variants`) the plan may time and choose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from lamina.functions._util import laid_out_like
from lamina.registry import Registry

# Op class -> the Kernel subclass a plan lowers its ops to.
KERNELS = Registry("plan kernel")

K = TypeVar("K", bound=type)


def kernel_for(*op_classes: type) -> Callable[[K], K]:
    """Register the decorated Kernel class for ops of exactly these classes (a subclass
    of an op may compute something else, so it is not lowered unless named). A kernel
    mixin that subclasses none of them, written once for several ops, is combined with
    each: `(mixin, op class)`, named after the op."""
    def register(kernel: K) -> K:
        for op_class in op_classes:
            combined = kernel if issubclass(kernel, op_class) else type(
                f"{op_class.__name__}Kernel", (kernel, op_class),
                {"__module__": kernel.__module__})
            combined.op_name = op_class.__name__
            KERNELS.add(op_class, combined)
        return kernel

    return register


def lower(op: Any) -> Any:
    """The op as the plan runs it: its registered kernel sharing its state, or the op."""
    kernel = KERNELS.get(type(op))
    return op if kernel is None else kernel.lower(op)


class Kernel:
    """Mixin for an op's plan kernel; the plan sets the attributes below before a run."""

    # Whether forward writes its outputs into `out_buffers` where given, and whether the
    # buffer may hold one of its own inputs that no later op reads (elementwise ops,
    # which NumPy's ufuncs allow to overlap their input exactly).
    writes_output = False
    writes_over_input = False
    out_buffers: list[Any] | None = None
    # Positions of inputs that no op reads after this one (it may overwrite them), of
    # outputs that a later op keeps for its backward anyway, and of inputs alive through
    # the whole step (parameters, the batch, the requested outputs).
    dead_inputs: frozenset[int] = frozenset()
    outputs_kept: frozenset[int] = frozenset()
    inputs_kept: frozenset[int] = frozenset()
    # The names of those three hints this kernel's forward reads (None: it does not say,
    # so any of them). Where none it reads is set, it keeps what it kept unhinted, and the
    # plan need not probe liveness again; nor where it reads inputs_kept alone, which may
    # only make it keep such an input instead of an array of its own: that input's memory
    # lives through the step anyway.
    reads_hints: frozenset[str] | None = None
    # Interchangeable kernels (same result up to float rounding) that a tuned plan times on
    # the real shapes, keeping the fastest; `variant` is the one in use ("" the default).
    variants: tuple[str, ...] = ()
    variant = ""
    op_name = ""  # the op's class name, which messages and plan descriptions show

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "reads_hints" not in vars(cls):
            # lamina's own kernels say which they read (tests/plan/test_plan_hints.py reads
            # each one's methods for them); one from elsewhere that does not say may read any.
            inherited = cls.reads_hints if cls.reads_hints is not None else frozenset()
            cls.reads_hints = inherited if cls.__module__.startswith("lamina.") else None

    @property
    def name(self) -> str:
        return self.op_name or type(self).__name__

    @classmethod
    def lower(cls, op: Any) -> Any:
        """A kernel of this class holding the traced op's state (a shallow copy)."""
        kernel = cls.__new__(cls)
        kernel.__dict__.update(vars(op))
        return kernel

    def out_buffer(self, i: int = 0, like: Any = None) -> Any:
        """The buffer for output i, or None (allocate as eagerly). With `like`, an array of
        the output's shape, viewed in like's memory order (see laid_out_like)."""
        buffers = self.out_buffers
        buf = buffers[i] if buffers else None
        return buf if buf is None or like is None else laid_out_like(buf, like)
