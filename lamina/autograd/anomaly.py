"""Anomaly detection (PyTorch's `torch.autograd.detect_anomaly`): while it is on, each op
recorded for backward keeps the stack of the line that ran it, and backward checks every
gradient an op returns. A NaN stops backward with a RuntimeError naming the op, and a
warning shows where in the user's forward code that op was called; any other error in an
op's backward shows the same trace."""

from __future__ import annotations

import traceback
import warnings
from typing import Any

import numpy as np

from lamina import state


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on.

    Examples:
        >>> lm.is_anomaly_enabled()
        False
    """
    return state.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly detection also checks backward's results for NaN.

    Examples:
        >>> lm.is_anomaly_check_nan_enabled()
        True
    """
    return state.anomaly_check_nan


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """Turn anomaly detection on or off for the process (see `detect_anomaly`).

    Examples:
        >>> lm.set_anomaly_enabled(True); lm.is_anomaly_enabled()
        True
        >>> lm.set_anomaly_enabled(False)
    """
    state.anomaly, state.anomaly_check_nan = bool(enabled), bool(check_nan)


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Set anomaly detection on or off: at once when made (so a bare call sets it for the
    process, as in PyTorch), and back to what it was after a `with` block.

    Examples:
        >>> with lm.autograd.set_detect_anomaly(True):
        ...     lm.is_anomaly_enabled()
        True
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.previous = (state.anomaly, state.anomaly_check_nan)
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: Any) -> None:
        state.anomaly, state.anomaly_check_nan = self.previous


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """A block (or, as a decorator, a function) with anomaly detection on: backward names
    the op whose gradient holds a NaN and shows the forward line that called it. Slow: for
    debugging only, as it warns.

    Examples:
        >>> x = lm.tensor([0.0], requires_grad=True)
        >>> with lm.autograd.detect_anomaly():  # doctest: +SKIP
        ...     x.sqrt().mul(0).sum().backward()
        RuntimeError: Function 'SqrtBackward' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        self.previous = (state.anomaly, state.anomaly_check_nan)
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc: Any) -> None:
        state.anomaly, state.anomaly_check_nan = self.previous

    def __call__(self, fn: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)
        run.__name__, run.__doc__ = fn.__name__, fn.__doc__
        return run


def forward_trace() -> list[str]:
    """The stack of the current op's caller, without lamina's own frames."""
    return [line for line in traceback.format_stack()[:-2]
            if "/lamina/autograd/" not in line and "/lamina/functions/" not in line]


def report(f: Any) -> None:
    """Warn with the forward trace of op `f`, whose backward failed."""
    trace = "".join(getattr(f, "forward_trace", ()) or ["  (not recorded: the op ran "
                                                        "before anomaly detection was on)\n"])
    warnings.warn(f"Error detected in {f.name}Backward. Traceback of forward call that "
                  f"caused the error:\n{trace}", stacklevel=3)


def check(f: Any, grads: tuple[Any, ...]) -> None:
    """Raise, after the forward trace's warning, where a gradient `f` returned has a NaN."""
    if not state.anomaly_check_nan:
        return
    for i, g in enumerate(grads):
        g = getattr(g, "array", g)  # a Tensor under create_graph
        if g is not None and np.asarray(g).dtype.kind in "fc" and np.isnan(g).any():
            report(f)
            raise RuntimeError(f"Function '{f.name}Backward' returned nan values in its "
                               f"{i}th output.")
