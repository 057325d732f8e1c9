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


class OptimizedModule(Layer):
    """`_orig_mod`, run through an inference plan outside grad mode. PyTorch's name and
    layout: the model is the child `_orig_mod` (state dict keys `_orig_mod.weight`, ...,
    as PyTorch's compiled models save them), and attributes it lacks are the model's.

    Examples:
        >>> fast = lm.compile(nn.Sequential(nn.Linear(4, 2), nn.ReLU()))
        >>> with lm.no_grad():
        ...     y = fast(lm.ones(3, 4))
        >>> y.shape, type(fast._orig_mod).__name__
        (lamina.Size([3, 2]), 'Sequential')
    """

    def __init__(self, module: Layer) -> None:
        super().__init__()
        self._orig_mod = module
        object.__setattr__(self, "_plan", None)
        object.__setattr__(self, "_eager", False)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_orig_mod":
                raise
            return getattr(self._orig_mod, name)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The module's output: planned where no graph is recorded, eager otherwise."""
        module = self._orig_mod
        if state.grad_enabled or self._eager or len(args) != 1 or kwargs:
            return module(*args, **kwargs)
        if self._plan is None:
            from lamina.plan import TraceError, compile

            try:
                object.__setattr__(self, "_plan", compile(module))
                return self._plan(*args)
            except TraceError as e:
                object.__setattr__(self, "_eager", True)
                warnings.warn(f"lamina.compile: {type(module).__name__} runs eagerly: "
                              f"{e}", stacklevel=2)
                return module(*args)
        return self._plan(*args)


CompiledModule = OptimizedModule  # the name lamina gave it first


def compile(model: Any = None, *, fullgraph: bool = False, dynamic: Any = None,  # noqa: A001
            backend: Any = "inductor", mode: Any = None, options: Any = None,
            disable: bool = False) -> Any:
    """A module that runs through lamina's execution plans (see OptimizedModule); a plain
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
    return OptimizedModule(model)


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

