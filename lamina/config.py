"""The one module that holds lamina's process-wide state: grad mode and the random generator.

Everything mutable and global lives here so that a reader finds it in one place, and so
that a checkpoint can save and restore it (`get_rng_state` / `set_rng_state`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

grad_enabled: bool = True
_rng: np.random.Generator = np.random.default_rng(0)
# The active lamina.plan tracer, or None: Function.apply reports every op to it.
tracer: Any = None


@contextlib.contextmanager
def no_grad() -> Iterator[None]:
    """Record no graph inside the block: results are plain tensors with no creator.

    Example:
        >>> with lm.no_grad():
        ...     y = model(x)   # no Function objects, no saved arrays
    """
    global grad_enabled
    previous, grad_enabled = grad_enabled, False
    try:
        yield
    finally:
        grad_enabled = previous


@contextlib.contextmanager
def enable_grad() -> Iterator[None]:
    """Record the graph inside the block, even within `no_grad`."""
    global grad_enabled
    previous, grad_enabled = grad_enabled, True
    try:
        yield
    finally:
        grad_enabled = previous


def is_grad_enabled() -> bool:
    """Whether operations are recorded for backward right now."""
    return grad_enabled


def manual_seed(seed: int) -> None:
    """Seed lamina's random generator (dropout, initialisers, shuffling) so runs repeat."""
    global _rng
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"manual_seed: seed must be a non-negative int; got {seed!r}")
    _rng = np.random.default_rng(int(seed))


def rng() -> np.random.Generator:
    """The generator every random op in lamina draws from."""
    return _rng


def get_rng_state() -> dict[str, Any]:
    """A JSON-safe snapshot of the generator, for checkpoints."""
    return _rng.bit_generator.state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore a snapshot taken by `get_rng_state`."""
    _rng.bit_generator.state = state
