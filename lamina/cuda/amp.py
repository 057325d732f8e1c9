"""`lamina.cuda.amp`, PyTorch's deprecated CUDA spelling of `lamina.amp`: on this machine
there is no CUDA, so (as PyTorch without one) autocast and GradScaler warn and disable
themselves, and the script runs in full precision.

Examples:
    >>> scaler = lm.cuda.amp.GradScaler(enabled=False)
    >>> scaler.is_enabled()
    False
"""

from __future__ import annotations

import warnings
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


def custom_fwd(fwd: Any = None, *, cast_inputs: Any = None) -> Any:
    """`lamina.amp.custom_fwd(device_type="cuda")`, deprecated as PyTorch's.

    Examples:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True):
        ...     warnings.simplefilter("always")
        ...     lm.cuda.amp.custom_fwd(abs)(-2)
        2
    """
    warnings.warn("`lamina.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`lamina.amp.custom_fwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd: Any = None) -> Any:
    """`lamina.amp.custom_bwd(device_type="cuda")`, deprecated as PyTorch's.

    Examples:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True):
        ...     warnings.simplefilter("always")
        ...     lm.cuda.amp.custom_bwd(abs)(-2)
        2
    """
    warnings.warn("`lamina.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`lamina.amp.custom_bwd(args..., device_type='cuda')` instead.",
                  FutureWarning, stacklevel=2)
    return amp.custom_bwd(bwd, device_type="cuda")
