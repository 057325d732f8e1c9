"""`lamina.backends.mps`: Apple's GPU backend, which lamina does not use."""

from __future__ import annotations


def is_available() -> bool:
    """False: lamina computes on the CPU."""
    return False


def is_built() -> bool:
    """False."""
    return False
