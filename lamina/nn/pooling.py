"""Pooling layers (max and average, 1-D to 3-D; adaptive average and max, 1-D and 2-D),
and Upsample. Max unpooling is in lamina/nn/unpooling.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.functions.adaptive_pool import output_sizes
from lamina.functions.resample import resample_args
from lamina.nn.layer import Layer
from lamina.nn.registry import config_value, register_layer

IntOrPair = int | tuple[int, int]


class _Pool(Layer):
    op: Callable[..., Tensor]

    def __init__(self, kernel_size: Any, stride: Any, padding: Any, **options: Any) -> None:
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.options = options  # the op's further arguments, in its order

    def forward(self, x: Tensor) -> Tensor:
        return type(self).op(x, self.kernel_size, self.stride, self.padding, **self.options)

    def get_config(self) -> dict[str, Any]:
        return {"kernel_size": config_value(self.kernel_size),
                "stride": config_value(self.stride), "padding": config_value(self.padding),
                **self.options}

    def extra_repr(self) -> str:
        stride = self.kernel_size if self.stride is None else self.stride
        return f"kernel_size={self.kernel_size}, stride={stride}, padding={self.padding}"


class _MaxPool(_Pool):
    """Max over windows; stride defaults to kernel_size, padding is -inf; PyTorch's
    dilation and ceil_mode (the last window may hang over the end), and return_indices:
    (output, indices) for MaxUnpool."""

    op = staticmethod(F.max_pool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 dilation: Any = 1, return_indices: bool = False, ceil_mode: bool = False
                 ) -> None:
        super().__init__(kernel_size, stride, padding, dilation=config_value(dilation),
                         ceil_mode=ceil_mode, return_indices=return_indices)

    def extra_repr(self) -> str:
        text = (f"{super().extra_repr()}, dilation={self.options['dilation']}, "
                f"ceil_mode={self.options['ceil_mode']}")
        return text + (", return_indices=True" if self.options["return_indices"] else "")


class _AvgPool(_Pool):
    """Mean over windows; zero padding counts in the mean unless count_include_pad is
    False; PyTorch's ceil_mode and divisor_override."""

    op = staticmethod(F.avg_pool2d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override: int | None = None) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad, divisor_override=divisor_override)


@register_layer("MaxPool1d")
class MaxPool1d(_MaxPool):
    """Max over windows of (N, C, L) input.

    Examples:
        >>> nn.MaxPool1d(2)(lm.zeros(1, 3, 8)).shape
        lamina.Size([1, 3, 4])
    """

    op = staticmethod(F.max_pool1d)


@register_layer("MaxPool2d")
class MaxPool2d(_MaxPool):
    """Max over windows of (N, C, H, W) input.

    Examples:
        >>> nn.MaxPool2d(3, stride=2, ceil_mode=True)(lm.zeros(1, 3, 8, 8)).shape
        lamina.Size([1, 3, 4, 4])
    """


@register_layer("MaxPool3d")
class MaxPool3d(_MaxPool):
    """Max over windows of (N, C, D, H, W) input.

    Examples:
        >>> nn.MaxPool3d(2)(lm.zeros(1, 2, 4, 4, 4)).shape
        lamina.Size([1, 2, 2, 2, 2])
    """

    op = staticmethod(F.max_pool3d)


@register_layer("AvgPool1d")
class AvgPool1d(_AvgPool):
    """Mean over windows of (N, C, L) input.

    Examples:
        >>> nn.AvgPool1d(2)(lm.zeros(1, 3, 8)).shape
        lamina.Size([1, 3, 4])
    """

    op = staticmethod(F.avg_pool1d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0,
                 ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        _Pool.__init__(self, kernel_size, stride, padding, ceil_mode=ceil_mode,
                       count_include_pad=count_include_pad)

    def extra_repr(self) -> str:  # PyTorch's AvgPool1d shows its settings as 1-tuples
        def one(v: Any) -> tuple[int, ...]:
            return tuple(v) if isinstance(v, (tuple, list)) else (v,)

        stride = self.kernel_size if self.stride is None else self.stride
        return (f"kernel_size={one(self.kernel_size)}, stride={one(stride)}, "
                f"padding={one(self.padding)}")


@register_layer("AvgPool2d")
class AvgPool2d(_AvgPool):
    """Mean over windows of (N, C, H, W) input.

    Examples:
        >>> nn.AvgPool2d(2)(lm.zeros(1, 3, 8, 8)).shape
        lamina.Size([1, 3, 4, 4])
    """


@register_layer("AvgPool3d")
class AvgPool3d(_AvgPool):
    """Mean over windows of (N, C, D, H, W) input.

    Examples:
        >>> nn.AvgPool3d(2)(lm.zeros(1, 2, 4, 4, 4)).shape
        lamina.Size([1, 2, 2, 2, 2])
    """

    op = staticmethod(F.avg_pool3d)


class _AdaptivePool(Layer):
    op: Callable[..., Tensor]
    nd: int

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        output_sizes(output_size, self.nd, type(self).__name__)  # fail at build, not at call
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return type(self).op(x, self.output_size)

    def get_config(self) -> dict[str, Any]:
        return {"output_size": config_value(self.output_size)}

    def extra_repr(self) -> str:
        return f"output_size={self.output_size!r}"  # a tuple too, as PyTorch prints it


@register_layer("AdaptiveAvgPool1d")
class AdaptiveAvgPool1d(_AdaptivePool):
    """Mean over `output_size` adaptive bins of (N, C, L) input, whatever L is (PyTorch's
    bins); 1 is global average pooling."""

    op = staticmethod(F.adaptive_avg_pool1d)
    nd = 1

    def __init__(self, output_size: int) -> None:
        super().__init__(output_size)


@register_layer("AdaptiveAvgPool2d")
class AdaptiveAvgPool2d(_AdaptivePool):
    """Mean over adaptive bins of (N, C, H, W) input to (N, C, *output_size), whatever H
    and W are (PyTorch's bins). 1 is global average pooling, the usual head of a
    convolutional network: `[AdaptiveAvgPool2d(1), Flatten(), Linear(C, classes)]` takes
    images of any size. In a pair, None keeps that axis's length.

    Examples:
        >>> nn.AdaptiveAvgPool2d(1)(x).shape      # x (8, 64, 7, 7)
        (8, 64, 1, 1)
    """

    op = staticmethod(F.adaptive_avg_pool2d)
    nd = 2

    def __init__(self, output_size: int | tuple[int | None, int | None]) -> None:
        super().__init__(output_size)


class _AdaptiveMax(Layer):
    op: Callable[..., Tensor]

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, x: Tensor) -> Any:
        return type(self).op(x, self.output_size, self.return_indices)

    def extra_repr(self) -> str:
        text = f"output_size={self.output_size}"
        return text + (", return_indices=True" if self.return_indices else "")

    def get_config(self) -> dict[str, Any]:
        return {"output_size": config_value(self.output_size),
                "return_indices": self.return_indices}


@register_layer("AdaptiveMaxPool1d")
class AdaptiveMaxPool1d(_AdaptiveMax):
    """Max over `output_size` bins of the last axis of (N, C, L).

    Examples:
        >>> nn.AdaptiveMaxPool1d(2)(lm.zeros(1, 3, 7)).shape
        lamina.Size([1, 3, 2])
    """

    op = staticmethod(F.adaptive_max_pool1d)


@register_layer("AdaptiveMaxPool2d")
class AdaptiveMaxPool2d(_AdaptiveMax):
    """Max over an `output_size` grid of bins of (N, C, H, W).

    Examples:
        >>> nn.AdaptiveMaxPool2d((2, 3))(lm.zeros(1, 3, 7, 7)).shape
        lamina.Size([1, 3, 2, 3])
    """

    op = staticmethod(F.adaptive_max_pool2d)


@register_layer("Upsample")
class Upsample(Layer):
    """Resample (N, C, L), (N, C, H, W) or (N, C, D, H, W) input to `size`, or by
    `scale_factor`, as PyTorch's Upsample: 'nearest', 'nearest-exact', 'linear' (1-D),
    'bilinear' or 'bicubic' (2-D), 'trilinear' (3-D) or 'area'. The usual way up in
    a decoder or U-Net is `[Upsample(scale_factor=2), Conv2d(C, C', 3, padding=1)]`,
    without the checkerboard a strided transposed convolution can leave.

    Examples:
        >>> nn.Upsample(scale_factor=2, mode="bilinear")(x).shape     # x (8, 16, 7, 7)
        (8, 16, 14, 14)
    """

    def __init__(self, size: int | tuple[int, ...] | None = None,
                 scale_factor: float | tuple[float, ...] | None = None,
                 mode: str = "nearest", align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        resample_args(size, scale_factor, mode, align_corners, None, "Upsample")
        self.size, self.scale_factor = size, scale_factor
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        return F.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self) -> str:
        scale = self.scale_factor
        if scale is not None:
            scale = tuple(map(float, scale)) if isinstance(scale, (tuple, list)) else float(scale)
            return f"scale_factor={scale!r}, mode={self.mode!r}"
        return f"size={self.size!r}, mode={self.mode!r}"

    def get_config(self) -> dict[str, Any]:
        return {"size": config_value(self.size), "scale_factor": config_value(self.scale_factor),
                "mode": self.mode, "align_corners": self.align_corners,
                "recompute_scale_factor": self.recompute_scale_factor}
