"""`lamina.amp`: PyTorch's mixed precision, for scripts that use it, on the CPU.

lamina computes in the dtypes it is given; it has no float16 fast path on the CPU and
NumPy has no bfloat16. So `autocast` with `enabled=False`, or on the CPU with float16 or
bfloat16, runs the block as it is (full precision), and `GradScaler` passes the loss and
steps through unchanged, as PyTorch's do when disabled. Asking for CUDA does what PyTorch
does on a machine without it: a warning, and the block runs disabled.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any


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


class GradScaler:
    """Loss scaling for float16 training: with no float16 here, a pass-through.

    Examples:
        >>> scaler = lm.amp.GradScaler("cpu")
        >>> w = lm.ones(1, requires_grad=True); opt = lm.optim.SGD([w], lr=0.1)
        >>> scaler.scale((w * 2).sum()).backward(); scaler.step(opt); scaler.update()
        >>> w
        tensor([0.8], requires_grad=True)
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if enabled and str(device).split(":")[0] == "cuda":
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available. "
                          " Disabling.", UserWarning, stacklevel=2)
            enabled = False
        self.enabled = enabled


    def scale(self, outputs: Any) -> Any:
        """The loss, unchanged (scale 1)."""
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        """Nothing to unscale."""

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """optimizer.step(*args, **kwargs)."""
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        """Nothing to update."""

    def get_scale(self) -> float:
        """1.0."""
        return 1.0

    def is_enabled(self) -> bool:
        """False: no scaling happens."""
        return False

    def state_dict(self) -> dict[str, Any]:
        """{} (no state)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Accepts a saved state; nothing to restore."""


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
