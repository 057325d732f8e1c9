"""The one module that holds lamina's process-wide state: grad mode, the default dtype, the
default random generator and the active plan tracer.

Everything mutable and global lives here so that a reader finds it in one place, and so
that a checkpoint can save and restore it (`lamina.get_rng_state` / `set_rng_state`). The
context managers and functions that change this state live in `lamina.autograd.grad_mode`,
`lamina.dtypes` and `lamina.random`.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

grad_enabled: bool = True
inference: bool = False
default_dtype: np.dtype = np.dtype(np.float32)
# The default lamina.Generator (set by lamina.random at import; reseeded by manual_seed).
default_generator: Any = None
# Numbers the recorded ops in order, so backward can tell whether an op read a tensor
# before or after an in-place write re-pointed it.
op_counter = itertools.count()
# The active lamina.plan tracer, or None: Function.apply reports every op to it.
tracer: Any = None
# The active lamina.profiler recorder, or None: Function.apply and backward run each op
# through it, so that it times them.
profiler: Any = None
# Anomaly detection (lamina.autograd.anomaly): ops keep their forward stack, and backward
# checks their gradients for NaN.
anomaly: bool = False
anomaly_check_nan: bool = True
# Set once a complex tensor has been made: from then on Function.apply checks each op's
# operands, and refuses complex ones where the op has no complex rule.
complex_seen: bool = False


def rng() -> np.random.Generator:
    """The NumPy generator behind the default lamina.Generator: every random op draws here."""
    return default_generator.numpy

