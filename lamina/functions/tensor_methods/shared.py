"""Two helpers the method groups share, each importing its op at its first call: the
method groups load with Tensor, before lamina.creation and the ops do."""

from __future__ import annotations

from typing import Any


def constant(values: Any) -> Any:
    """values (an array, a number, a nested list) as a tensor outside the graph."""
    from lamina.creation import as_tensor

    return as_tensor(values)


def where(cond: Any, a: Any, b: Any) -> Any:
    """lamina.where: a where cond, else b; the gradient goes to the one picked."""
    from lamina.functions.math import where as pick

    return pick(cond, a, b)
