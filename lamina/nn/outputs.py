"""A model's outputs as a flat list: a tensor, or nested tuples of them (a recurrent
layer's `(out, (h, c))`), as ONNX export and execution plans both take them."""

from __future__ import annotations

from typing import Any


def flatten(result: Any) -> list[Any]:
    """A function's outputs, nested tuples (a recurrent layer's (out, (h, c))) flattened.

    Examples:
        >>> flatten((1, (2, 3)))
        [1, 2, 3]
    """
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in flatten(item)]
    return [result]
