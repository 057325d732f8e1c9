"""Per-sample normalisations: instance norm (each sample's channel over its positions;
Ulyanov et al., 2016) and local response norm (each value over neighbouring channels;
Krizhevsky et al., 2012), PyTorch's functions."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.array import reshape, stack
from lamina.functions.padding import pad
from lamina.functions.sample_norm import group_norm


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample of (N, C, *) over its positions, then scale
    and shift per channel. With `use_input_stats` the running statistics, if given, are
    updated in place (the batch's average of the per-sample mean and unbiased variance);
    without it they are used instead.

    Examples:
        >>> F.instance_norm(lm.rand(2, 3, 8)).shape
        lamina.Size([2, 3, 8])
    """
    if input.ndim < 3:
        raise ShapeError(f"instance_norm: expected input (N, C, *) with positions; got "
                         f"{tuple(input.shape)}")
    c = input.shape[1]
    if not use_input_stats:
        shape = (1, c) + (1,) * (input.ndim - 2)
        mean, var = (reshape(Tensor(np.asarray(t.array)), shape)
                     for t in (running_mean, running_var))
        y = (input - mean) / (var + eps) ** 0.5
        if weight is not None:
            y = y * reshape(weight, shape)
        return y if bias is None else y + reshape(bias, shape)
    if running_mean is not None or running_var is not None:
        input = RunningStats(running_mean, running_var, momentum).apply(input)
    return group_norm(input, c, weight, bias, eps)


class RunningStats(Function):
    """Passes its input through, updating the running statistics from it on the way: an
    op, so a compiled plan updates them on every step as eager mode does."""

    def __init__(self, running_mean: Tensor | None, running_var: Tensor | None,
                 momentum: float) -> None:
        self.stats, self.momentum = (running_mean, running_var), momentum

    def forward(self, x: Any) -> Any:
        flat = x.reshape(x.shape[0], x.shape[1], -1)
        n = flat.shape[-1]
        values = (flat.mean(-1), flat.var(-1) * n / max(n - 1, 1))
        for stat, value in zip(self.stats, values):
            if stat is not None:
                stat.array *= 1 - self.momentum
                stat.array += self.momentum * value.mean(0).astype(stat.dtype)
        return x.copy()

    def backward(self, gy: Any) -> Any:
        return gy


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """b_c = a_c / (k + alpha / size * sum of a^2 over the `size` channels around c)^beta,
    on (N, C, *).

    Examples:
        >>> F.local_response_norm(lm.ones(1, 4, 2, 2), size=2).shape
        lamina.Size([1, 4, 2, 2])
    """
    if input.ndim < 3:
        raise ShapeError(f"local_response_norm: expected 3D or higher dimensionality input "
                         f"(got {input.ndim} dimensions)")
    c = input.shape[1]
    squares = input * input
    moved = squares.movedim(1, -1)  # channels last, where pad works on them
    padded = pad(moved, (size // 2, (size - 1) // 2)).movedim(-1, 1)
    window = stack([padded[:, i:i + c] for i in range(size)], 0).sum(0)
    return input / (window * (alpha / size) + k) ** beta


class CrossMapLRN(Function):
    """PyTorch's legacy CrossMapLRN2d on (N, C, H, W), values and gradients as its own:
    its running window never drops channel 0 once past it (the first removal comes one
    channel late), and its backward uses a window of its own, not the derivative of that
    forward; both are kept, for scripts ported from it to compute the same."""

    def __init__(self, size: int, alpha: float, beta: float, k: float) -> None:
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, x: Any) -> Any:
        if x.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {x.ndim}D instead.")
        c, pre = x.shape[1], int((self.size - 1) / 2 + 1)
        squares = x * x
        sums = np.cumsum(squares, axis=1)
        channel = np.arange(c)
        scale = sums[:, np.minimum(channel + pre - 1, c - 1)]
        late = channel > pre  # channels 1 .. c - pre dropped, channel 0 kept
        scale[:, late] += squares[:, :1] - sums[:, channel[late] - pre]
        scale = scale * x.dtype.type(self.alpha / self.size) + x.dtype.type(self.k)
        y = x * scale ** -self.beta
        self.save_for_backward(x, y)
        self.scale = scale
        return y

    def backward(self, gy: Any) -> Any:
        x, y = self.saved_tensors
        c, size = x.shape[1], self.size
        if size < 2:
            raise RuntimeError("CrossMapLRN2d backward: size 1 leaves its padded window no "
                               "room, as in PyTorch, whose backward fails too; use "
                               "nn.LocalResponseNorm(1)")
        before = int(size - (size - 1) / 2)  # PyTorch's padding before channel 0
        ratio = gy * y / self.scale
        padded = np.zeros((x.shape[0], c + size - 1, *x.shape[2:]), x.dtype)
        padded[:, before:before + c] = ratio
        sums = np.concatenate([np.zeros_like(padded[:, :1]), np.cumsum(padded, axis=1)], 1)
        window = sums[:, size:size + c] - sums[:, :c]  # padded channels c .. c + size - 1
        return (self.scale ** -self.beta * gy
                - (2 * self.alpha * self.beta / size) * x * window).astype(x.dtype, copy=False)


def cross_map_lrn2d(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,  # noqa: A002
                    k: float = 1.0) -> Tensor:
    """PyTorch's legacy cross-channel normalisation (nn.CrossMapLRN2d), on 4-D input.

    Examples:
        >>> F.cross_map_lrn2d(lm.ones(1, 4, 2, 2), 3).shape
        lamina.Size([1, 4, 2, 2])
    """
    return CrossMapLRN(size, alpha, beta, k).apply(input)
