"""`lamina.backends.cudnn`: PyTorch's cuDNN flags, kept for scripts that set them.

Examples:
    >>> lm.backends.cudnn.benchmark = True      # accepted; there is no cuDNN here
    >>> lm.backends.cudnn.is_available()
    False
"""

from __future__ import annotations

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available() -> bool:
    """False: lamina computes on the CPU."""
    return False


def version() -> None:
    """None: no cuDNN."""
    return None
