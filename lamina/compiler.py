"""`lamina.compile(model)`: PyTorch's call, answered with lamina's execution plans.

A compiled module runs its forward through an inference plan (`lamina.plan.compile` with
no loss) when no graph is being recorded (`no_grad`, `inference_mode`), and eagerly
otherwise, since a training step's plan needs its loss (`lamina.plan.compile(model,
loss_fn)` builds that). A model a plan cannot capture (Python branches on tensor values)
runs eagerly, with a one-line warning saying why.
"""

from __future__ import annotations

import warnings
from typing import Any

from lamina import state
from lamina.nn.layer import Layer

_PRECISION = {"value": "highest"}


class CompiledModule(Layer):
    """`module`, run through an inference plan outside grad mode.

    Examples:
        >>> fast = lm.compile(nn.Sequential(nn.Linear(4, 2), nn.ReLU()))
        >>> with lm.no_grad():
        ...     y = fast(lm.ones(3, 4))
        >>> y.shape
        lamina.Size([3, 2])
    """

    def __init__(self, module: Layer) -> None:
        super().__init__()
        self.module = module
        object.__setattr__(self, "_plan", None)
        object.__setattr__(self, "_eager", False)

    def forward(self, *args: Any) -> Any:
        """The module's output: planned where no graph is recorded, eager otherwise."""
        if state.grad_enabled or self._eager or len(args) != 1:
            return self.module(*args)
        if self._plan is None:
            from lamina.plan import TraceError, compile

            try:
                object.__setattr__(self, "_plan", compile(self.module))
                return self._plan(*args)
            except TraceError as e:
                object.__setattr__(self, "_eager", True)
                warnings.warn(f"lamina.compile: {type(self.module).__name__} runs eagerly: "
                              f"{e}", stacklevel=2)
                return self.module(*args)
        return self._plan(*args)


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None,  # noqa: A001
            backend: Any = "inductor", mode: Any = None, options: Any = None,
            disable: bool = False) -> Any:
    """A module that runs through lamina's execution plans (see CompiledModule); a plain
    function comes back as it is. Usable as `lamina.compile(model)` or as a decorator.

    Examples:
        >>> model = lm.compile(nn.Linear(4, 2))
        >>> isinstance(model, nn.Module)
        True
    """
    if model is None:
        return lambda m: compile(m, disable=disable)
    if disable or not isinstance(model, Layer):
        return model
    return CompiledModule(model)


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted for PyTorch's API ('highest', 'high', 'medium'): NumPy's float32 matmul
    has one precision, so nothing changes.

    Examples:
        >>> lm.set_float32_matmul_precision("high"); lm.get_float32_matmul_precision()
        'high'
    """
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"set_float32_matmul_precision: expected 'highest', 'high' or "
                           f"'medium'; got {precision!r}")
    _PRECISION["value"] = precision


def get_float32_matmul_precision() -> str:
    """What set_float32_matmul_precision was given ('highest' by default).

    Examples:
        >>> lm.get_float32_matmul_precision() in ("highest", "high", "medium")
        True
    """
    return _PRECISION["value"]

