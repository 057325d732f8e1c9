"""grid_sample: an image read at arbitrary points (spatial transformer networks), with
PyTorch's modes, padding modes and coordinate conventions, differentiable in the image
and (bilinear, bicubic) in the grid."""

from __future__ import annotations

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.unary import clip


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample input (N, C, H, W) at grid (N, Ho, Wo, 2) of (x, y) points in [-1, 1]
    (-1 the left or top edge): (N, C, Ho, Wo).

    Args:
        mode: "bilinear", "nearest" or "bicubic" (PyTorch's cubic convolution, a = -0.75,
            over the 4 x 4 pixels around each point; the padding mode applies to each).
        padding_mode: what points outside read: "zeros", "border" (the nearest edge
            pixel) or "reflection" (the image mirrored at its edges).
        align_corners: +-1 are the centres of the corner pixels (True) or their outer
            edges (False, the default).

    Examples:
        >>> theta = lm.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
        >>> x = lm.rand(1, 1, 4, 4)
        >>> grid = F.affine_grid(theta, (1, 1, 4, 4), align_corners=False)
        >>> bool(np.allclose(F.grid_sample(x, grid, align_corners=False).numpy(), x.numpy()))
        True
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"grid_sample: mode must be 'bilinear', 'nearest' or 'bicubic'; got "
                         f"{mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"grid_sample: padding_mode must be 'zeros', 'border' or "
                         f"'reflection'; got {padding_mode!r}")
    if input.ndim != 4 or grid.ndim != 4 or grid.shape[-1] != 2 or grid.shape[0] != input.shape[0]:
        raise ShapeError(f"grid_sample: expected input (N, C, H, W) and grid (N, Ho, Wo, 2); "
                         f"got {tuple(input.shape)} and {tuple(grid.shape)}")
    align = bool(align_corners)
    h, w = input.shape[2:]
    if mode == "bicubic":
        return _bicubic(input, grid, align, padding_mode)
    ix = _source(grid[..., 0], w, align, padding_mode)
    iy = _source(grid[..., 1], h, align, padding_mode)
    if mode == "nearest":
        return _read(input, np.rint(iy.array), np.rint(ix.array))
    x0, y0 = np.floor(ix.array), np.floor(iy.array)
    wx1, wy1 = ix - x0, iy - y0  # the weights carry the gradient to the grid
    wx0, wy0 = 1.0 - wx1, 1.0 - wy1
    out = None
    for dy, wy in ((0, wy0), (1, wy1)):
        for dx, wx in ((0, wx0), (1, wx1)):
            term = _read(input, y0 + dy, x0 + dx) * (wy * wx).unsqueeze(1)
            out = term if out is None else out + term
    return out


def _bicubic(input: Tensor, grid: Tensor, align: bool, padding_mode: str) -> Tensor:
    """Each point from its 4 x 4 neighbours: the cubic's weights of the point's offsets
    (which carry the gradient to the grid) times the neighbours, each folded into the
    image by the padding mode on its own, as PyTorch's."""
    from lamina.functions.resample import cubic_weights

    h, w = input.shape[2:]
    ix, iy = _pixels(grid[..., 0], w, align), _pixels(grid[..., 1], h, align)
    x0, y0 = np.floor(ix.array), np.floor(iy.array)
    wxs, wys = cubic_weights(ix - x0), cubic_weights(iy - y0)
    out = None
    for dy, wy in zip(range(-1, 3), wys):
        yk = _fold(Tensor(y0 + dy), h, align, padding_mode).array
        row = None
        for dx, wx in zip(range(-1, 3), wxs):
            xk = _fold(Tensor(x0 + dx), w, align, padding_mode).array
            term = _read(input, yk, xk) * wx.unsqueeze(1)
            row = term if row is None else row + term
        out = row * wy.unsqueeze(1) if out is None else out + row * wy.unsqueeze(1)
    return out


def _pixels(coord: Tensor, size: int, align: bool) -> Tensor:
    """A normalised coordinate in [-1, 1] as a pixel position."""
    return (coord + 1) * ((size - 1) / 2) if align else ((coord + 1) * size - 1) / 2


def _source(coord: Tensor, size: int, align: bool, padding_mode: str) -> Tensor:
    """A normalised coordinate as a pixel position, after the padding mode's folding."""
    return _fold(_pixels(coord, size, align), size, align, padding_mode)


def _fold(x: Tensor, size: int, align: bool, padding_mode: str) -> Tensor:
    """A pixel position folded into the image by the padding mode ("zeros": as it is)."""
    if padding_mode == "border":
        return clip(x, 0, size - 1)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align else _reflect(x, -1, 2 * size - 1)
        return clip(x, 0, size - 1)
    return x


def _reflect(x: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """x mirrored into [low, high] as often as it takes; piecewise x * (+-1) + constant,
    so the slope and offset are found on the values and the gradient flows through x."""
    if twice_low == twice_high:
        return x * 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    a = x.array - low
    sign = np.where(a < 0, -1.0, 1.0)
    flips = np.floor(np.abs(a) / span)
    even = flips % 2 == 0
    slope = np.where(even, sign, -sign).astype(x.dtype)
    offset = np.where(even, low - flips * span, span + low + flips * span) - slope * low
    return x * slope + offset.astype(x.dtype)


def _read(input: Tensor, y: np.ndarray, x: np.ndarray) -> Tensor:
    """input at integer pixels (y, x), each (N, Ho, Wo); zeros where outside: (N, C, Ho, Wo)."""
    h, w = input.shape[2:]
    inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
    yi, xi = np.clip(y, 0, h - 1).astype(np.int64), np.clip(x, 0, w - 1).astype(np.int64)
    batch = np.arange(input.shape[0])[:, None, None]
    values = input[batch, :, yi, xi]  # (N, Ho, Wo, C)
    values = values * inside[..., None].astype(input.dtype)
    return values.permute(0, 3, 1, 2)
