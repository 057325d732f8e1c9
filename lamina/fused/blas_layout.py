"""How an array of matrices reads to row-major CBLAS: each matrix's transpose flag and
leading dimension, the stride from one matrix of a stack to the next, or the matrices'
addresses where no one stride walks the stack. NumPy only; MKL's callers
(lamina/fused/mkl_blas.py, lamina/fused/mkl_packed.py) pass these to its routines.
"""

from __future__ import annotations

from typing import Any

import numpy as np

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


def layout(a: Any) -> tuple[int, int, int | None] | None:
    """(transpose flag, leading dimension, stride from one matrix of the stack to the
    next) of an array of matrices for row-major BLAS, in elements; None where neither
    matrix axis is unit-strided. The stride is None where no one stride walks the stack:
    such a stack goes by its matrices' addresses."""
    item, (rows, cols) = a.itemsize, a.shape[-2:]
    if any(s % item for s in a.strides):
        return None
    *stack, s0, s1 = (s // item for s in a.strides)
    step = stack_step(a.shape[:-2], stack)
    if s1 == 1 and s0 >= max(1, cols):
        return NO_TRANS, s0, step
    if s0 == 1 and s1 >= max(1, rows):
        return TRANS, s1, step
    return None


def stack_step(shape: tuple[int, ...], strides: list[int]) -> int | None:
    """The one positive stride that walks a stack of these sizes and strides in order
    (0 for a single matrix), or None where there is none."""
    dims = [(n, s) for n, s in zip(shape, strides) if n > 1]
    if not dims:
        return 0
    step = expected = dims[-1][1]
    for n, s in reversed(dims):
        if s != expected or s <= 0:
            return None
        expected *= n
    return step


def addresses(a: Any) -> Any:
    """The address of every matrix of the stack a, in C order of its leading axes."""
    offsets = np.zeros((), np.intp)
    for n, stride in zip(a.shape[:-2], a.strides[:-2]):
        offsets = np.add.outer(offsets, np.arange(n, dtype=np.intp) * stride)
    return (offsets + a.ctypes.data).reshape(-1)
