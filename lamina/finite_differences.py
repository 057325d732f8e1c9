"""`lamina.gradient`, PyTorch's torch.gradient: the derivative of sampled values along
each dim by finite differences, second-order accurate inside, first- or second-order at
the ends. Built from slices and arithmetic, so it differentiates."""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.functions.shape import cat


def _along(f: Tensor, d: int, start: int, stop: int | None) -> Tensor:
    n = f.shape[d]
    start = start if start >= 0 else n + start
    stop = n if stop is None else (stop if stop >= 0 else n + stop)
    return f.narrow(d, start, stop - start)


def _uniform(f: Tensor, d: int, h: float, edge_order: int) -> Tensor:
    inner = (_along(f, d, 2, None) - _along(f, d, 0, -2)) / (2 * h)
    if edge_order == 1:
        first = (_along(f, d, 1, 2) - _along(f, d, 0, 1)) / h
        last = (_along(f, d, -1, None) - _along(f, d, -2, -1)) / h
    else:
        first = (-1.5 * _along(f, d, 0, 1) + 2 * _along(f, d, 1, 2)
                 - 0.5 * _along(f, d, 2, 3)) / h
        last = (0.5 * _along(f, d, -3, -2) - 2 * _along(f, d, -2, -1)
                + 1.5 * _along(f, d, -1, None)) / h
    return cat([first, inner, last], d)


def _coordinates(f: Tensor, d: int, x: Tensor, edge_order: int) -> Tensor:
    if edge_order != 1:
        raise RuntimeError("gradient: edge_order=2 with coordinates is not supported in "
                           "lamina; give edge_order=1 or a uniform spacing")
    shape = [1] * f.ndim
    shape[d] = -1
    x = x.reshape(shape)
    hd = _along(x, d, 1, -1) - _along(x, d, 0, -2)  # the step before each inner point
    hs = _along(x, d, 2, None) - _along(x, d, 1, -1)  # and after
    inner = (-hs / (hd * (hd + hs)) * _along(f, d, 0, -2)
             + (hs - hd) / (hd * hs) * _along(f, d, 1, -1)
             + hd / (hs * (hd + hs)) * _along(f, d, 2, None))
    first = (_along(f, d, 1, 2) - _along(f, d, 0, 1)) / (_along(x, d, 1, 2) - _along(x, d, 0, 1))
    last = ((_along(f, d, -1, None) - _along(f, d, -2, -1))
            / (_along(x, d, -1, None) - _along(x, d, -2, -1)))
    return cat([first, inner, last], d)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,  # noqa: A002
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative of `input` along each dim in `dim` (all by default), one tensor per
    dim: `spacing` is one step for every dim, a step per dim, or the coordinates of the
    samples along each dim.

    Examples:
        >>> lm.gradient(lm.tensor([1.0, 4.0, 9.0, 16.0]))
        (tensor([3., 4., 6., 7.]),)
    """
    if edge_order not in (1, 2):
        raise ValueError(f"gradient: edge_order must be 1 or 2; got {edge_order}")
    dims = list(range(input.ndim)) if dim is None else \
        [dim] if isinstance(dim, int) else list(dim)
    dims = [d % input.ndim for d in dims]
    steps = list(spacing) if isinstance(spacing, (list, tuple)) else [spacing] * len(dims)
    if len(steps) != len(dims):
        raise RuntimeError(f"gradient: expected spacing to be unspecified, a scalar, or a "
                           f"list of {len(dims)} elements; got {len(steps)}")
    f = input if input.is_floating_point() else input.float()
    out = []
    for d, h in zip(dims, steps):
        if f.shape[d] < edge_order + 1:
            raise RuntimeError(f"gradient: each dim needs at least edge_order + 1 = "
                               f"{edge_order + 1} samples; dim {d} has {f.shape[d]}")
        out.append(_coordinates(f, d, h, edge_order) if isinstance(h, Tensor)
                   else _uniform(f, d, float(h.item() if hasattr(h, "item") else h),
                                 edge_order))
    return tuple(out)


__all__ = ["gradient"]
