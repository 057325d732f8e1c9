"""Layers that move values between axes: pixel shuffle and unshuffle, sliding blocks
(Unfold) and their sum (Fold), and Unflatten."""

from __future__ import annotations

from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.layer import Layer
from lamina.nn.registry import config_value, register_layer


@register_layer("PixelShuffle")
class PixelShuffle(Layer):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r) (sub-pixel convolution's upsampling).

    Examples:
        >>> nn.PixelShuffle(2)(lm.zeros(1, 8, 3, 3)).shape
        lamina.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"

    def get_config(self) -> dict[str, Any]:
        return {"upscale_factor": self.upscale_factor}


@register_layer("PixelUnshuffle")
class PixelUnshuffle(Layer):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W), PixelShuffle's inverse.

    Examples:
        >>> nn.PixelUnshuffle(2)(lm.zeros(1, 2, 6, 6)).shape
        lamina.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"

    def get_config(self) -> dict[str, Any]:
        return {"downscale_factor": self.downscale_factor}


class _Blocks(Layer):
    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
                 ) -> None:
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")

    def get_config(self) -> dict[str, Any]:
        return {k: config_value(v) for k, v in (
            ("kernel_size", self.kernel_size), ("dilation", self.dilation),
            ("padding", self.padding), ("stride", self.stride))}


@register_layer("Unfold")
class Unfold(_Blocks):
    """Sliding blocks of (N, C, H, W) as columns (N, C * kh * kw, L): F.unfold.

    Examples:
        >>> nn.Unfold(kernel_size=2)(lm.zeros(1, 3, 4, 4)).shape
        lamina.Size([1, 12, 9])
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


@register_layer("Fold")
class Fold(_Blocks):
    """Columns of blocks (N, C * kh * kw, L) summed into (N, C, *output_size): F.fold.

    Examples:
        >>> nn.Fold(output_size=(4, 4), kernel_size=2)(lm.zeros(1, 12, 9)).shape
        lamina.Size([1, 3, 4, 4])
    """

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, {super().extra_repr()}"

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def get_config(self) -> dict[str, Any]:
        return {"output_size": config_value(self.output_size), **super().get_config()}


@register_layer("Unflatten")
class Unflatten(Layer):
    """Axis `dim` split into `unflattened_size`: Flatten's inverse.

    Examples:
        >>> nn.Unflatten(1, (2, 5))(lm.zeros(3, 10)).shape
        lamina.Size([3, 2, 5])
    """

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

    def get_config(self) -> dict[str, Any]:
        return {"dim": self.dim, "unflattened_size": list(self.unflattened_size)}
