"""`finfo` and `iinfo`, PyTorch's: a dtype's limits as Python numbers, with the dtype's name;
and PyTorch's numeric constants (`torch.pi`, `torch.inf`, ...), Python floats as there.

NumPy's `finfo` gives NumPy scalars (`eps + 1` would stay float32) and no
`finfo()` for the default dtype; these answer as PyTorch's do.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina import dtypes

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
newaxis = None  # x[:, lm.newaxis], as NumPy's


class finfo:  # noqa: N801 - PyTorch's name
    """The limits of a floating-point dtype (the default one if none is given).

    Examples:
        >>> lm.finfo(lm.float32).eps
        1.1920928955078125e-07
        >>> lm.finfo(lm.float16).max, lm.finfo(lm.float16).resolution
        (65504.0, 0.001)
    """

    def __init__(self, type: Any = None) -> None:  # noqa: A002 - PyTorch's argument name
        d = dtypes.get_default_dtype() if type is None else dtypes.resolve(type)
        if d is None or d.kind != "f":
            raise TypeError(f"finfo() requires a floating point input type; got {type}. Use "
                            "iinfo for integer types")
        info = np.finfo(d)
        self.bits = int(info.bits)
        self.eps, self.resolution = float(info.eps), 10.0 ** -int(info.precision)
        self.max, self.min = float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.dtype = str(d)

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:  # noqa: N801 - PyTorch's name
    """The limits of an integer dtype.

    Examples:
        >>> lm.iinfo(lm.int32).max, lm.iinfo(lm.uint8)
        (2147483647, iinfo(min=0, max=255, dtype=uint8))
    """

    def __init__(self, type: Any) -> None:  # noqa: A002 - PyTorch's argument name
        d = dtypes.resolve(type)
        if d is None or d.kind not in "iub":
            raise TypeError(f"iinfo() requires an integer input type; got {type}. Use finfo "
                            "for floating-point types")
        info = np.iinfo(np.uint8 if d.kind == "b" else d)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = str(d)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
