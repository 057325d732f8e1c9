"""`lamina.amp`: PyTorch's mixed precision, for scripts that use it, on the CPU.

lamina computes in the dtypes it is given; it has no float16 fast path on the CPU and
NumPy has no bfloat16. So `autocast` with `enabled=False`, or on the CPU with float16 or
bfloat16, runs the block as it is (full precision). `GradScaler` scales as PyTorch's does
on the CPU (lamina/grad_scaler.py): a step whose gradients overflowed is skipped. Asking
for CUDA does what PyTorch does on a machine without it: a warning, and autocast or the
scaler runs disabled.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any

from lamina.grad_scaler import GradScaler  # noqa: F401 - lamina.amp.GradScaler, as torch.amp


class autocast:  # noqa: N801 - PyTorch's name
    """A context manager and decorator that runs its block in full precision.

    Examples:
        >>> with lm.amp.autocast("cpu", dtype=lm.float16):
        ...     y = lm.ones(2) * 2
        >>> y.dtype
        dtype('float32')
    """

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: Any = None) -> None:
        if enabled and str(device_type).split(":")[0] != "cpu":
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                          "autocast.", UserWarning, stacklevel=2)
            enabled = False
        self.device_type, self.enabled = device_type, enabled

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)
        return wrapper


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast can run on `device_type`: the CPU only here.

    Examples:
        >>> lm.amp.is_autocast_available("cpu"), lm.amp.is_autocast_available("cuda")
        (True, False)
    """
    return device_type == "cpu"


def custom_fwd(fwd: Any = None, *, device_type: str, cast_inputs: Any = None) -> Any:
    """Decorate a custom Function's forward for autocast, as PyTorch's: lamina's autocast
    computes in full precision, so forward runs as written.

    Examples:
        >>> @lm.amp.custom_fwd(device_type="cpu")
        ... def forward(ctx, x):
        ...     return x * 2
        >>> forward(None, lm.ones(1))
        tensor([2.])
    """
    if fwd is None:
        return lambda f: custom_fwd(f, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd: Any = None, *, device_type: str) -> Any:
    """Decorate a custom Function's backward to match its forward's autocast state: here,
    backward runs as written.

    Examples:
        >>> lm.amp.custom_bwd(abs, device_type="cpu")(-2)
        2
    """
    if bwd is None:
        return lambda f: custom_bwd(f, device_type=device_type)
    return bwd
