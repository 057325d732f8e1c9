"""Padding (torch.nn.functional.pad): constant padding as one op, whose gradient is the
slice of gy the input fills; reflect, replicate and circular padding as one index per
padded axis, differentiated as any indexing is."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor


class Pad(Function):
    complex_rule = "holomorphic"

    def __init__(self, widths: tuple[tuple[int, int], ...], value: float) -> None:
        self.widths, self.value = widths, value

    def forward(self, x: Any) -> Any:
        return np.pad(x, self.widths, constant_values=self.value)

    def backward(self, gy: Any) -> Any:
        index = tuple(slice(lo, gy.shape[i] - hi) for i, (lo, hi) in enumerate(self.widths))
        return gy[index]


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> Tensor:
    """Pad with torch.nn.functional.pad's convention and modes.

    Args:
        input: input of any shape.
        pad: (left, right) for the last axis, then (left, right) for the one before, and so on;
            a negative width crops that side first, in every mode, as PyTorch's does.
        mode: "constant" (fill with `value`, default 0), "reflect" (mirror, not repeating
            the edge), "replicate" (repeat the edge) or "circular" (wrap around).
        value: the fill value of "constant".

    Examples:
        >>> F.pad(lm.tensor([[1.0, 2.0, 3.0]]), (2, 1), mode="reflect")
        tensor([[3., 2., 1., 2., 3., 2.]])
    """
    x = input
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ValueError(f"pad: expected pairs for at most {x.ndim} axes; got {tuple(pad)}")
    pairs = [(int(pad[i]), int(pad[i + 1])) for i in range(0, len(pad), 2)]
    widths = [(0, 0)] * (x.ndim - len(pairs)) + pairs[::-1]
    if min(min(p) for p in widths) < 0:
        # A negative width crops that side (PyTorch's, in every mode): slice first, then
        # pad what is left by the positive widths.
        for axis, (lo, hi) in enumerate(widths):
            if x.shape[axis] + lo + hi < 0:
                raise RuntimeError(f"pad: the input size {x.shape[axis]} of axis {axis}, plus "
                                   f"negative padding {lo} and {hi}, gives a negative size")
        x = x[tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths,
                                                                              x.shape))]
        widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if mode == "constant":
        return Pad(tuple(widths), 0.0 if value is None else value).apply(x)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: unknown padding mode {mode!r}; one of 'constant', "
                                  "'reflect', 'replicate', 'circular'")
    if value:
        raise ValueError(f"pad: padding mode {mode!r} doesn't take in value argument")
    for axis in range(x.ndim - len(pairs), x.ndim):
        lo, hi = widths[axis]
        if lo or hi:
            x = x[(slice(None),) * axis + (_pad_index(mode, x.shape[axis], lo, hi),)]
    return x


def _pad_index(mode: str, n: int, lo: int, hi: int) -> np.ndarray:
    """Which input position each padded position along one axis reads."""
    if mode != "replicate" and max(lo, hi) > n - (mode == "reflect"):
        raise ValueError(f"pad: {mode} padding of ({lo}, {hi}) needs an axis longer than "
                         f"{max(lo, hi) - (mode == 'circular')}; this one has {n}")
    index = np.arange(-lo, n + hi)
    if mode == "replicate":
        return np.clip(index, 0, n - 1)
    if mode == "circular":
        return index % n
    index = np.abs(index)
    return np.where(index > n - 1, 2 * (n - 1) - index, index)
