"""PyTorch's type promotion, on top of NumPy's rules: Python numbers never widen a
tensor, 0-d tensors count less than dimensioned ones, and across categories (bool <
integer < float < complex) the higher category's dtype wins (int64 with float32 is
float32, not NumPy's float64), widened to the float's precision where a complex meets a
float (float64 with complex64 is complex128). A Python float stands for the default dtype,
a Python complex for its complex (lamina.dtypes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina import dtypes

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def result_type(a: Any, b: Any) -> np.dtype:
    """The dtype of an op on a and b under PyTorch's promotion.

    Operands rank as dimensioned tensors, then 0-d tensors, then Python numbers; the
    result has the highest category (bool < integer < float) present, taken from the
    highest-ranked operands of that category. A Python float stands for the default dtype.
    """
    groups: list[list[np.dtype]] = [[], [], []]
    for v in (a, b):
        arr = getattr(v, "array", None)
        if arr is not None:
            groups[0 if arr.ndim else 1].append(arr.dtype)
        elif isinstance(v, np.ndarray):
            groups[0 if v.ndim else 1].append(v.dtype)
        else:
            groups[2].append(_scalar_dtype(v))
    result = None
    for group in reversed(groups):  # from the lowest rank up
        if not group:
            continue
        d = group[0] if len(group) == 1 else promote_types(*group)
        result = d if result is None else _combine(d, result)
    return result


def _combine(higher: np.dtype, lower: np.dtype) -> np.dtype:
    """Promotion across ranks: a higher-ranked operand wins unless the lower one is of a
    higher category, which then lifts the result to that category."""
    if _CATEGORY[higher.kind] >= _CATEGORY[lower.kind]:
        return higher
    if lower.kind == "c" and higher.kind == "f":  # float32 with 1j: complex64
        return np.result_type(higher, np.complex64)
    return promote_types(higher, lower)


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """PyTorch's promote_types: within a category NumPy's rule; across categories the dtype
    of the higher category (int64 with float32 is float32, not NumPy's float64).

    Examples:
        >>> lm.promote_types(lm.int64, lm.float32)
        dtype('float32')
    """
    ca, cb = _CATEGORY[a.kind], _CATEGORY[b.kind]
    if ca == cb or {a.kind, b.kind} == {"f", "c"}:  # float64 with complex64: complex128
        return np.promote_types(a, b)
    return a if ca > cb else b


def _scalar_dtype(v: Any) -> np.dtype:
    if isinstance(v, (bool, np.bool_)):
        return dtypes.bool
    if isinstance(v, np.generic):
        if v.dtype.kind == "c":
            return dtypes.default_complex()
        return v.dtype if v.dtype.kind != "f" else dtypes.get_default_dtype()
    if isinstance(v, (int, np.integer)):
        return dtypes.int64
    if isinstance(v, complex):
        return dtypes.default_complex()
    return dtypes.get_default_dtype()
