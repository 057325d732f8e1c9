"""`lamina.accelerator`, as PyTorch 2.x's on a machine with no accelerator."""

from __future__ import annotations

from typing import Any


def is_available() -> bool:
    """False: lamina computes on the CPU."""
    return False


def current_accelerator(check_available: bool = False) -> Any:
    """None: there is no accelerator."""
    return None


def device_count() -> int:
    """0."""
    return 0
