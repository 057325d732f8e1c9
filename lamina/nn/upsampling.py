"""PyTorch's older upsampling layers, `Upsample` with the mode fixed: UpsamplingNearest2d
and UpsamplingBilinear2d (which aligns corners, as PyTorch's does)."""

from __future__ import annotations

from typing import Any

from lamina.nn.pooling import Upsample
from lamina.nn.registry import register_layer


@register_layer("UpsamplingNearest2d")
class UpsamplingNearest2d(Upsample):
    """Upsample(size, scale_factor, mode="nearest") of (N, C, H, W) input.

    Examples:
        >>> nn.UpsamplingNearest2d(scale_factor=2)(lm.zeros(1, 1, 2, 2)).shape
        lamina.Size([1, 1, 4, 4])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        super().__init__(size, scale_factor, "nearest")

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        return {"size": config["size"], "scale_factor": config["scale_factor"]}


@register_layer("UpsamplingBilinear2d")
class UpsamplingBilinear2d(UpsamplingNearest2d):
    """Upsample(size, scale_factor, mode="bilinear", align_corners=True).

    Examples:
        >>> nn.UpsamplingBilinear2d(size=(3, 3))(lm.zeros(1, 1, 2, 2)).shape
        lamina.Size([1, 1, 3, 3])
    """

    def __init__(self, size: Any = None, scale_factor: Any = None) -> None:
        Upsample.__init__(self, size, scale_factor, "bilinear", True)
