"""`lamina.cuda.amp`, PyTorch's deprecated CUDA spelling of `lamina.amp`: on this machine
there is no CUDA, so (as PyTorch without one) autocast and GradScaler warn and disable
themselves, and the script runs in full precision.

Examples:
    >>> scaler = lm.cuda.amp.GradScaler(enabled=False)
    >>> scaler.is_enabled()
    False
"""

from __future__ import annotations

from typing import Any

from lamina import amp


class autocast(amp.autocast):  # noqa: N801 - PyTorch's name
    """`lamina.amp.autocast("cuda", ...)`: disabled, with PyTorch's warning, here."""

    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: Any = True
                 ) -> None:
        super().__init__("cuda", dtype, enabled, cache_enabled)


class GradScaler(amp.GradScaler):
    """`lamina.amp.GradScaler("cuda", ...)`: disabled, with PyTorch's warning, here."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
