"""The array module behind a tensor: NumPy always, CuPy for arrays that live on a GPU."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

try:  # CuPy is an optional extra; lamina runs on NumPy alone.
    import cupy  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - depends on the machine
    cupy = None


def get_array_module(array: Any) -> ModuleType:
    """Return `cupy` for a CuPy array and `numpy` for anything else."""
    if cupy is not None and isinstance(array, cupy.ndarray):
        return cupy
    return np


def to_numpy(array: Any) -> np.ndarray:
    """Copy an array to host memory as a NumPy array (no copy when it already is one)."""
    if cupy is not None and isinstance(array, cupy.ndarray):
        return cupy.asnumpy(array)
    return np.asarray(array)


def is_array(obj: Any) -> bool:
    """Whether `obj` is a backend array (NumPy or CuPy)."""
    return isinstance(obj, np.ndarray) or (cupy is not None and isinstance(obj, cupy.ndarray))
