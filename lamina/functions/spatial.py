"""Rearranging and resampling images: pixel (un)shuffle, sliding blocks (unfold) and
their sum (fold), and sampling at a grid of points (grid_sample, affine_grid); PyTorch's
functions, arguments and conventions."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.array import reshape, transpose
from lamina.functions.padding import pad


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r): channels become sub-pixel positions
    (Shi et al., 2016).

    Examples:
        >>> F.pixel_shuffle(lm.zeros(1, 8, 3, 3), 2).shape
        lamina.Size([1, 2, 6, 6])
    """
    r, (*lead, c, h, w) = upscale_factor, input.shape
    if c % (r * r):
        raise ShapeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                         f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                         f"is not divisible by {r * r}")
    x = reshape(input, (-1, c // (r * r), r, r, h, w))
    x = transpose(x, (0, 1, 4, 2, 5, 3))
    return reshape(x, (*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W), the inverse of pixel_shuffle."""
    r, (*lead, c, h, w) = downscale_factor, input.shape
    if h % r or w % r:
        raise ShapeError(f"pixel_unshuffle expects height ({h}) and width ({w}) to be "
                         f"divisible by downscale_factor ({r})")
    x = reshape(input, (-1, c, h // r, r, w // r, r))
    x = transpose(x, (0, 1, 3, 5, 2, 4))
    return reshape(x, (*lead, c * r * r, h // r, w // r))


def _pair(v: Any) -> tuple[int, int]:
    return (int(v), int(v)) if np.isscalar(v) else (int(v[0]), int(v[1]))


def _blocks(size: tuple[int, int], kernel: Any, dilation: Any, padding: Any, stride: Any
            ) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """For an image of `size` padded by `padding`: the row and column each block element
    reads, (kh * kw, L) each, and the block grid (bh, bw)."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = map(_pair, (kernel, dilation, padding, stride))
    bh = (size[0] + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    bw = (size[1] + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if bh < 1 or bw < 1:
        raise ShapeError(f"unfold: a {kh}x{kw} kernel (dilation {dh, dw}, padding {ph, pw}) "
                         f"fits no block in a {size[0]}x{size[1]} image")
    rows = (np.arange(kh) * dh)[:, None, None, None] + (np.arange(bh) * sh)[None, None, :, None]
    cols = (np.arange(kw) * dw)[None, :, None, None] + (np.arange(bw) * sw)[None, None, None, :]
    rows, cols = np.broadcast_arrays(rows, cols)
    return rows.reshape(kh * kw, -1), cols.reshape(kh * kw, -1), (bh, bw)


class _Unfold(Function):
    def __init__(self, rows: np.ndarray, cols: np.ndarray) -> None:
        self.rows, self.cols = rows, cols

    def forward(self, xp: Any) -> Any:
        self.shape = xp.shape
        n, c = xp.shape[:2]
        return xp[:, :, self.rows, self.cols].reshape(n, c * self.rows.shape[0], -1)

    def backward(self, gy: Any) -> Any:
        return _scatter(gy, self.shape, self.rows, self.cols)


class _Fold(Function):
    def __init__(self, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, ...]) -> None:
        self.rows, self.cols, self.shape = rows, cols, shape

    def forward(self, blocks: Any) -> Any:
        return _scatter(blocks, self.shape, self.rows, self.cols)

    def backward(self, gy: Any) -> Any:
        n, c = gy.shape[:2]
        return gy[:, :, self.rows, self.cols].reshape(n, c * self.rows.shape[0], -1)


def _scatter(blocks: Any, shape: tuple[int, ...], rows: np.ndarray, cols: np.ndarray) -> Any:
    """Sum (N, C * K, L) block elements into an image of `shape` (N, C, H, W)."""
    n, c = shape[:2]
    out = np.zeros(shape, blocks.dtype)
    np.add.at(out, (slice(None), slice(None), rows, cols),
              blocks.reshape(n, c, *rows.shape))
    return out


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """Sliding blocks of an image batch (N, C, H, W) as columns: (N, C * kh * kw, L), L
    the number of blocks (im2col).

    Examples:
        >>> F.unfold(lm.zeros(2, 3, 5, 5), kernel_size=3).shape
        lamina.Size([2, 27, 9])
    """
    if input.ndim != 4:
        raise NotImplementedError(f"unfold: only 4-D input (N, C, H, W) is supported; got "
                                  f"{input.ndim}-D")
    ph, pw = _pair(padding)
    rows, cols, _ = _blocks(input.shape[2:], kernel_size, dilation, padding, stride)
    return _Unfold(rows, cols).apply(pad(input, (pw, pw, ph, ph)))


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """Sum columns of blocks (N, C * kh * kw, L) into an image (N, C, H, W): the adjoint
    of unfold (col2im), where overlapping blocks add up.

    Examples:
        >>> F.fold(lm.ones(1, 4, 4), output_size=(3, 3), kernel_size=2).numpy()[0, 0]
        array([[1., 2., 1.],
               [2., 4., 2.],
               [1., 2., 1.]], dtype=float32)
    """
    size, (ph, pw) = _pair(output_size), _pair(padding)
    rows, cols, (bh, bw) = _blocks(size, kernel_size, dilation, padding, stride)
    n, ck, length = input.shape
    if ck % rows.shape[0] or length != bh * bw:
        raise ShapeError(f"fold: expected input (N, C * {rows.shape[0]}, {bh * bw}) for "
                         f"output_size {size} and kernel_size {kernel_size}; got "
                         f"{tuple(input.shape)}")
    shape = (n, ck // rows.shape[0], size[0] + 2 * ph, size[1] + 2 * pw)
    out = _Fold(rows, cols, shape).apply(input)
    return out[:, :, ph:ph + size[0], pw:pw + size[1]]


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid (N, H, W, 2) of 2-D affine transforms theta (N, 2, 3), for an
    output of `size` (N, C, H, W): each point is theta @ (x, y, 1) in [-1, 1] coordinates.

    Examples:
        >>> theta = lm.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> F.affine_grid(theta, (1, 1, 2, 3), align_corners=False).shape
        lamina.Size([1, 2, 3, 2])
    """
    n, _, h, w = size
    if theta.shape != (n, 2, 3):
        raise ShapeError(f"affine_grid: expected theta of shape ({n}, 2, 3) for size {size}; "
                         f"got {tuple(theta.shape)}")
    xs, ys = _coordinates(w, bool(align_corners)), _coordinates(h, bool(align_corners))
    base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], np.ones((1, 1))), -1)
    base = Tensor(base.reshape(1, h * w, 3).astype(theta.dtype))
    return reshape(base @ transpose(theta, (0, 2, 1)), (n, h, w, 2))


def _coordinates(n: int, align_corners: bool) -> np.ndarray:
    """The [-1, 1] coordinate of each of n pixels: of their centres, or of the corner
    pixels' centres at +-1 with align_corners."""
    if align_corners:
        return np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
    return (np.arange(n) * 2 + 1) / n - 1
