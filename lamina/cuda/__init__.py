"""`lamina.cuda`, as PyTorch's on a machine with no GPU: lamina computes with NumPy on the
CPU, so scripts that ask (`if torch.cuda.is_available(): ...`) take their CPU path."""

from __future__ import annotations

from typing import Any

from lamina.cuda import amp as amp
from lamina.errors import OutOfMemoryError as OutOfMemoryError


def is_available() -> bool:
    """False: lamina computes on the CPU."""
    return False


def device_count() -> int:
    """0: no CUDA device lamina can use."""
    return 0


def manual_seed(seed: int) -> None:
    """Accepted and ignored (there is no CUDA generator), as PyTorch on a CPU machine."""


def manual_seed_all(seed: int) -> None:
    """Accepted and ignored, as PyTorch on a CPU machine."""


def synchronize(device: Any = None) -> None:
    """Nothing to wait for on the CPU."""


def empty_cache() -> None:
    """Nothing to free: lamina holds no GPU memory."""
