"""Convolution layers (1-D, 2-D and 3-D) and transposed convolution layers (1-D and 2-D)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.functions._util import pair
from lamina.functions.conv_padding import same_padding
from lamina.functions.conv_transpose import ConvTranspose
from lamina.nn import init
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer

IntOrPair = int | tuple[int, int]
PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Layer):
    nd = 2
    transposed = False  # weight (C_in, C_out / groups, ...), and an output_padding

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any,
                 padding: Any, dilation: Any, groups: int, bias: bool,
                 output_padding: Any = 0, padding_mode: str = "zeros") -> None:
        super().__init__()
        name = type(self).__name__
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{name}: in_channels ({in_channels}) and out_channels "
                             f"({out_channels}) must be divisible by groups ({groups})")
        if padding_mode not in PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of {list(PADDING_MODES)}; got "
                             f"{padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = pair(kernel_size, "kernel_size", name, self.nd)
        self.stride = pair(stride, "stride", name, self.nd)
        if min(self.kernel_size) < 1 or min(self.stride) < 1:
            raise ValueError(f"{name}: kernel_size and stride must be >= 1; got kernel_size="
                             f"{kernel_size}, stride={stride}")
        self.padding_mode = padding_mode
        if isinstance(padding, str):  # "same" or "valid", checked now rather than at a call
            same_padding(padding, self.kernel_size, stride, dilation, name)
            self.padding = padding
        else:
            self.padding = pair(padding, "padding", name, self.nd)
        self.dilation = pair(dilation, "dilation", name, self.nd)
        self.output_padding = pair(output_padding, "output_padding", name, self.nd)
        if self.transposed:  # its checks of output_padding, at build rather than first call
            ConvTranspose(self.nd, stride, padding, output_padding, groups, dilation)
        shape = ((in_channels, out_channels // groups) if self.transposed
                 else (out_channels, in_channels // groups)) + self.kernel_size
        self.weight = Parameter(np.empty(shape, np.float32))
        self.bias = Parameter(np.empty(out_channels, np.float32)) if bias else None
        init.default_linear_(self.weight, self.bias, math.prod(shape[1:]))

    def _input(self, x: Tensor) -> tuple[Tensor, Any]:
        """The input and the padding the convolution adds: a padding_mode other than
        zeros pads the input itself (reflect, replicate or circular)."""
        if self.padding_mode == "zeros":
            return x, self.padding
        if isinstance(self.padding, str):
            sides = same_padding(self.padding, self.kernel_size, self.stride, self.dilation,
                                 type(self).__name__)
        else:
            sides = [(p, p) for p in self.padding]
        widths = [w for lo, hi in reversed(sides) for w in (lo, hi)]
        return F.pad(x, widths, mode=self.padding_mode), 0

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        if len(shape) != self.nd + 2 or shape[1] % self.groups or shape[1] == self.in_channels:
            return None
        return f"in_channels={shape[1]}"

    def extra_repr(self) -> str:
        """PyTorch's: the settings that differ from their defaults."""
        text = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}")
        for key, default in (("padding", 0), ("dilation", 1), ("output_padding", 0)):
            value = getattr(self, key)
            if value != (default,) * self.nd:
                text += f", {key}={value}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        return text if self.padding_mode == "zeros" else f"{text}, padding_mode={self.padding_mode}"

    def get_config(self) -> dict[str, Any]:
        def plain(v: Any) -> Any:
            if isinstance(v, str):
                return v
            return v[0] if len(set(v)) == 1 else list(v)

        extra = {"output_padding": plain(self.output_padding)} if self.transposed else {}
        return {"in_channels": self.in_channels, "out_channels": self.out_channels,
                "kernel_size": plain(self.kernel_size), "stride": plain(self.stride),
                "padding": plain(self.padding), **extra, "dilation": plain(self.dilation),
                "groups": self.groups, "bias": self.bias is not None,
                **({} if self.transposed else {"padding_mode": self.padding_mode})}


@register_layer("Conv1d")
class Conv1d(_ConvNd):
    """1-D convolution over (N, C_in, L) input; weight (C_out, C_in / groups, K).

    Output length: (L + 2 * padding - dilation * (K - 1) - 1) // stride + 1.
    """

    nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int],
                 stride: int | tuple[int] = 1, padding: int | tuple[int] | str = 0,
                 dilation: int | tuple[int] = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode=padding_mode)

    def forward(self, x: Tensor) -> Tensor:
        x, padding = self._input(x)
        return F.conv1d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


@register_layer("Conv2d")
class Conv2d(_ConvNd):
    """2-D convolution over (N, C_in, H, W) input; weight (C_out, C_in / groups, KH, KW).

    Examples:
        >>> conv = nn.Conv2d(1, 32, 3, padding=1)    # (N, 1, 28, 28) -> (N, 32, 28, 28)
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrPair,
                 stride: IntOrPair = 1, padding: IntOrPair | str = 0, dilation: IntOrPair = 1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode=padding_mode)

    def forward(self, x: Tensor) -> Tensor:
        x, padding = self._input(x)
        return F.conv2d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


@register_layer("Conv3d")
class Conv3d(_ConvNd):
    """3-D convolution over (N, C_in, D, H, W) input; weight (C_out, C_in / groups, KD, KH,
    KW).

    Examples:
        >>> nn.Conv3d(2, 4, 3, padding=1)(lm.zeros(1, 2, 5, 5, 5)).shape
        lamina.Size([1, 4, 5, 5, 5])
    """

    nd = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, bias: bool = True,
                 padding_mode: str = "zeros") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode=padding_mode)

    def forward(self, x: Tensor) -> Tensor:
        x, padding = self._input(x)
        return F.conv3d(x, self.weight, self.bias, self.stride, padding, self.dilation,
                        self.groups)


@register_layer("ConvTranspose1d")
class ConvTranspose1d(_ConvNd):
    """1-D transposed convolution over (N, C_in, L) input, as PyTorch's; weight (C_in,
    C_out / groups, K). It upsamples: a stride-s ConvTranspose1d undoes the length change
    of a stride-s Conv1d of the same kernel and padding (output_padding picks among the
    lengths that Conv1d maps to one).

    Output length: (L - 1) * stride - 2 * padding + dilation * (K - 1) + output_padding + 1.
    """

    nd = 1
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int],
                 stride: int | tuple[int] = 1, padding: int | tuple[int] = 0,
                 output_padding: int | tuple[int] = 0, groups: int = 1, bias: bool = True,
                 dilation: int | tuple[int] = 1) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, output_padding)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv_transpose1d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


@register_layer("ConvTranspose3d")
class ConvTranspose3d(_ConvNd):
    """3-D transposed convolution over (N, C_in, D, H, W) input, as PyTorch's; weight
    (C_in, C_out / groups, KD, KH, KW): the learned upsampling of 3-D U-Nets.

    Examples:
        >>> nn.ConvTranspose3d(2, 3, 2, stride=2)(lm.zeros(1, 2, 2, 2, 2)).shape
        lamina.Size([1, 3, 4, 4, 4])
    """

    nd = 3
    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, bias: bool = True,
                 dilation: Any = 1) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, output_padding)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv_transpose3d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)


@register_layer("ConvTranspose2d")
class ConvTranspose2d(_ConvNd):
    """2-D transposed convolution over (N, C_in, H, W) input, as PyTorch's (argument order
    and weight layout (C_in, C_out / groups, KH, KW) included): the learned upsampling of
    decoders, U-Nets and GAN generators.

    Examples:
        >>> up = nn.ConvTranspose2d(16, 8, 2, stride=2)    # (N, 16, 7, 7) -> (N, 8, 14, 14)
    """

    transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrPair,
                 stride: IntOrPair = 1, padding: IntOrPair = 0, output_padding: IntOrPair = 0,
                 groups: int = 1, bias: bool = True, dilation: IntOrPair = 1) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, output_padding)

    def forward(self, x: Tensor) -> Tensor:
        return F.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)
