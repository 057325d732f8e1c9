"""Grad mode: `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`.

Each is a context manager and a decorator (`@lamina.no_grad()` or `@lamina.no_grad`), as
in PyTorch. The flag itself lives in `lamina.state`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from lamina import state


class _GradMode:
    """Sets grad mode to `self.mode` inside a `with` block or a decorated function."""

    mode: bool = True

    def __new__(cls, fn: Any = None, *args: Any, **kwargs: Any) -> Any:
        # `@no_grad` without parentheses decorates the function directly.
        if callable(fn) and not isinstance(fn, bool):
            return cls()(fn)
        return super().__new__(cls)

    def __enter__(self) -> None:
        self.previous = (state.grad_enabled, state.inference)
        state.grad_enabled = self.mode

    def __exit__(self, *exc: Any) -> None:
        state.grad_enabled, state.inference = self.previous

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)(*self._args()):
                return fn(*args, **kwargs)
        return wrapper

    def _args(self) -> tuple[Any, ...]:
        return ()



class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Record no graph inside the block: results are plain tensors with no grad_fn.

    Examples:
        >>> w = lm.ones(2, requires_grad=True)
        >>> (w * 3).sum().backward()
        >>> with lm.no_grad():
        ...     w -= 0.1 * w.grad      # updates the parameter in place
        >>> w
        tensor([0.7000, 0.7000], requires_grad=True)
    """

    mode = False


class enable_grad(_GradMode):  # noqa: N801
    """Record the graph inside the block, even within `no_grad`.

    Examples:
        >>> x = lm.ones(1, requires_grad=True)
        >>> with lm.no_grad():
        ...     with lm.enable_grad():
        ...         y = x * 2
        >>> y.requires_grad
        True
    """

    mode = True


class set_grad_enabled(_GradMode):  # noqa: N801
    """Turn recording on or off: as a call (`lm.set_grad_enabled(False)`), a context
    manager or a decorator.

    Examples:
        >>> x = lm.ones(2, requires_grad=True)
        >>> with lm.set_grad_enabled(False):
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __new__(cls, mode: bool) -> Any:
        return object.__new__(cls)

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self.previous = (state.grad_enabled, state.inference)
        state.grad_enabled = self.mode  # takes effect at once when simply called

    def __enter__(self) -> None:
        state.grad_enabled = self.mode

    def _args(self) -> tuple[Any, ...]:
        return (self.mode,)


class inference_mode(_GradMode):  # noqa: N801
    """`no_grad` for inference (`inference_mode(False)` leaves grad mode as it is).

    Examples:
        >>> model = nn.Linear(3, 2)
        >>> with lm.inference_mode():
        ...     logits = model(lm.ones(1, 3))
        >>> logits.requires_grad
        False
    """

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return object.__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.enabled = bool(mode)

    def __enter__(self) -> None:
        self.previous = (state.grad_enabled, state.inference)
        if self.enabled:
            state.grad_enabled, state.inference = False, True

    def _args(self) -> tuple[Any, ...]:
        return (self.enabled,)


def is_grad_enabled() -> bool:
    """Whether operations are recorded for backward right now.

    Examples:
        >>> with lm.no_grad():
        ...     print(lm.is_grad_enabled())
        False
    """
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Whether an `inference_mode` block is active.

    Examples:
        >>> with lm.inference_mode():
        ...     print(lm.is_inference_mode_enabled())
        True
    """
    return state.inference
