"""PyTorch's factory arguments, `device=` and `dtype=`, on the constructor of every
built-in layer: `nn.Linear(3, 4, dtype=lm.float64)`.

Each layer's own `__init__` keeps just its own arguments (and its config); the class is
wrapped once, when it is defined, so that a call with `device` or `dtype` builds the layer
as usual, then casts its floating parameters and buffers to `dtype` and checks `device`
(lamina computes on the CPU). Only lamina's classes are wrapped: a user's module takes
what its own `__init__` says, as in PyTorch.
"""

from __future__ import annotations

import functools
from typing import Any

from lamina.dtypes import check_device


def add_factory_kwargs(cls: type) -> None:
    """Wrap `cls.__init__` (if the class defines one) to take device= and dtype=."""
    init = cls.__dict__.get("__init__")
    if init is None or not cls.__module__.startswith("lamina.") or getattr(
            init, "takes_factory_kwargs", False):
        return

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, device: Any = None, dtype: Any = None,
                 **kwargs: Any) -> None:
        check_device(device)
        init(self, *args, **kwargs)
        if dtype is not None:
            self.to(dtype)

    __init__.takes_factory_kwargs = True  # type: ignore[attr-defined]
    cls.__init__ = __init__  # type: ignore[misc]
