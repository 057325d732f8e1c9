"""PyTorch's string paddings of a convolution, "same" and "valid", as numbers: symmetric
where they can be, else the input padded at its end first (as PyTorch pads it)."""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.functions._util import pair
from lamina.functions.padding import pad


def same_padding(padding: str, kernel: tuple[int, ...], stride: Any, dilation: Any,
                 op: str) -> list[tuple[int, int]]:
    """PyTorch's padding="same" or "valid" as (before, after) per spatial axis: "same"
    keeps the size (stride 1 only), the odd element after, as PyTorch pads it."""
    nd = len(kernel)
    if padding == "valid":
        return [(0, 0)] * nd
    if padding != "same":
        raise ValueError(f"{op}: invalid padding string {padding!r}, should be one of "
                         "{'valid', 'same'}")
    if any(s != 1 for s in pair(stride, "stride", op, nd)):
        raise ValueError(f"{op}: padding='same' is not supported for strided convolutions")
    totals = [d * (k - 1) for d, k in zip(pair(dilation, "dilation", op, nd), kernel)]
    return [(t // 2, t - t // 2) for t in totals]


def string_padding(x: Tensor, padding: str, kernel: tuple[int, ...], stride: Any,
                   dilation: Any, op: str) -> tuple[Tensor, tuple[int, ...]]:
    """The input and the symmetric padding that give "same" or "valid": an uneven
    "same" pads the input's end itself."""
    sides = same_padding(padding, tuple(kernel), stride, dilation, op)
    if all(lo == hi for lo, hi in sides):
        return x, tuple(lo for lo, _ in sides)
    widths = [w for lo, hi in reversed(sides) for w in (0, hi - lo)]
    return pad(x, widths), tuple(lo for lo, _ in sides)
