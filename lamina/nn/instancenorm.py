"""Per-sample normalisation layers: InstanceNorm1d/2d/3d and LocalResponseNorm, with
PyTorch's arguments, defaults (no affine, no running statistics) and buffers."""

from __future__ import annotations

from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.functions.instance_norm import RunningStats, cross_map_lrn2d
from lamina.nn.layer import Layer, Parameter
from lamina.nn.registry import register_layer


class _InstanceNorm(Layer):
    nd = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1,
                 affine: bool = False, track_running_stats: bool = False) -> None:
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.weight = Parameter(np.ones(num_features, np.float32)) if affine else None
        self.bias = Parameter(np.zeros(num_features, np.float32)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(num_features, np.float32))
            self.register_buffer("running_var", np.ones(num_features, np.float32))
            # kept at 0, as PyTorch keeps it: in its state dict, not counted
            self.register_buffer("num_batches_tracked", np.array(0, np.int64))
        else:
            self.running_mean = self.running_var = None

    def forward(self, input: Tensor) -> Tensor:
        batched = self.nd + 2
        if input.ndim not in (batched - 1, batched):
            raise ShapeError(f"{type(self).__name__}: expected {batched - 1}D (unbatched) or "
                             f"{batched}D (batched) input; got {input.ndim}D input "
                             f"{tuple(input.shape)}")
        x = input.unsqueeze(0) if input.ndim == batched - 1 else input
        if x.shape[1] != self.num_features and self.affine:
            raise ShapeError(f"{type(self).__name__}: expected input with {self.num_features} "
                             f"channels; got {tuple(input.shape)}")
        if self.training and self.track_running_stats:  # the update is an op: plans replay it
            x = RunningStats(self.running_mean, self.running_var, self.momentum).apply(x)
            y = F.instance_norm(x, None, None, self.weight, self.bias, True, eps=self.eps)
        else:
            y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                                self.training or not self.track_running_stats, self.momentum,
                                self.eps)
        return y.squeeze(0) if input.ndim == batched - 1 else y

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.affine}, "
                f"track_running_stats={self.track_running_stats}")

    def get_config(self) -> dict[str, Any]:
        return {"num_features": self.num_features, "eps": self.eps, "momentum": self.momentum,
                "affine": self.affine, "track_running_stats": self.track_running_stats}


@register_layer("InstanceNorm1d")
class InstanceNorm1d(_InstanceNorm):
    """Each sample's channel normalised over its length: (N, C, L) or (C, L).

    Examples:
        >>> nn.InstanceNorm1d(3)(lm.rand(2, 3, 8)).shape
        lamina.Size([2, 3, 8])
    """


@register_layer("InstanceNorm2d")
class InstanceNorm2d(_InstanceNorm):
    """Each sample's channel normalised over its image: (N, C, H, W) or (C, H, W) (style
    transfer's normalisation).

    Examples:
        >>> nn.InstanceNorm2d(3, affine=True)(lm.rand(2, 3, 4, 4)).shape
        lamina.Size([2, 3, 4, 4])
    """

    nd = 2


@register_layer("InstanceNorm3d")
class InstanceNorm3d(_InstanceNorm):
    """Each sample's channel normalised over its volume: (N, C, D, H, W).

    Examples:
        >>> nn.InstanceNorm3d(2)(lm.rand(1, 2, 3, 3, 3)).shape
        lamina.Size([1, 2, 3, 3, 3])
    """

    nd = 3


@register_layer("LocalResponseNorm")
class LocalResponseNorm(Layer):
    """Each value divided by (k + alpha / size * sum of squares over `size` neighbouring
    channels)^beta (AlexNet's normalisation).

    Examples:
        >>> nn.LocalResponseNorm(2)(lm.ones(1, 4, 2, 2)).shape
        lamina.Size([1, 4, 2, 2])
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
                 ) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"

    def get_config(self) -> dict[str, Any]:
        return {"size": self.size, "alpha": self.alpha, "beta": self.beta, "k": self.k}


@register_layer("CrossMapLRN2d")
class CrossMapLRN2d(LocalResponseNorm):
    """PyTorch's legacy cross-channel normalisation of (N, C, H, W), with its values and
    gradients (which differ slightly from LocalResponseNorm's; see
    lamina.functions.instance_norm.CrossMapLRN).

    Examples:
        >>> nn.CrossMapLRN2d(3)
        CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1
                 ) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)
