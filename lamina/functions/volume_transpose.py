"""3-D transposed convolution, as a 3-D convolution of the input spread by the stride
(zeros between its elements), padded by dilation * (k - 1) - padding (and output_padding
on the far side), with the kernel flipped and its channel axes swapped per group: the
adjoint of conv3d, built from ops that differentiate."""

from __future__ import annotations

from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions._util import unbatched
from lamina.functions.shape import concat, reshape
from lamina.functions.volume import conv3d, per_axis


def _spread(x: Tensor, axis: int, step: int) -> Tensor:
    """x with step - 1 zeros after each element along `axis` but the last."""
    n = x.shape[axis]
    gaps = x.new_zeros(*x.shape[:axis + 1], step - 1, *x.shape[axis + 1:])
    both = concat([x.unsqueeze(axis + 1), gaps], axis + 1)
    merged = reshape(both, (*x.shape[:axis], n * step, *x.shape[axis + 1:]))
    return merged.narrow(axis, 0, (n - 1) * step + 1)


def _pad_axis(x: Tensor, axis: int, low: int, high: int) -> Tensor:
    """Zeros added (or, for a negative count, elements cut) at both ends of `axis`."""
    if low < 0:
        x = x.narrow(axis, -low, x.shape[axis] + low)
    if high < 0:
        x = x.narrow(axis, 0, x.shape[axis] + high)
    parts = [x.new_zeros(*x.shape[:axis], n, *x.shape[axis + 1:]) for n in
             (max(low, 0), max(high, 0))]
    return concat([p for p in (parts[0], x, parts[1]) if p.shape[axis]], axis)


@unbatched(3)
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """3-D transposed convolution, PyTorch's: input (N, C_in, D, H, W), weight
    (C_in, C_out / groups, kd, kh, kw) -> (N, C_out, D', H', W'), each output size
    (in - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1.

    Examples:
        >>> F.conv_transpose3d(lm.zeros(1, 2, 3, 3, 3), lm.zeros(2, 4, 2, 2, 2), stride=2).shape
        lamina.Size([1, 4, 6, 6, 6])
    """
    if input.ndim != 5 or weight.ndim != 5 or input.shape[1] != weight.shape[0]:
        raise ShapeError(f"conv_transpose3d: expected input (N, C_in, D, H, W) and weight "
                         f"(C_in, C_out / groups, kd, kh, kw); got {tuple(input.shape)} and "
                         f"{tuple(weight.shape)}")
    s, p = per_axis(stride, 3, "stride"), per_axis(padding, 3, "padding")
    op, d = per_axis(output_padding, 3, "output_padding"), per_axis(dilation, 3, "dilation")
    if any(o >= max(a, b) for o, a, b in zip(op, s, d)):
        raise ValueError(f"conv_transpose3d: output_padding {op} must be smaller than stride "
                         f"{s} or dilation {d}")
    kernel = tuple(weight.shape[2:])
    x = input
    for axis, step in zip((2, 3, 4), s):
        if step > 1:
            x = _spread(x, axis, step)
    for axis, k, pad, extra, dil in zip((2, 3, 4), kernel, p, op, d):
        edge = dil * (k - 1) - pad
        x = _pad_axis(x, axis, edge, edge + extra)
    c_in, per_out = weight.shape[0], weight.shape[1]
    w = reshape(weight, (groups, c_in // groups, per_out, *kernel)).transpose(1, 2)
    w = reshape(w, (groups * per_out, c_in // groups, *kernel)).flip(2, 3, 4)
    return conv3d(x, w, bias, 1, 0, d, groups)
