"""`nn.LinearCrossEntropyLoss` (PyTorch 2.13): a vocabulary head and its cross-entropy in
one module, `loss(hidden, target)`; the logits are computed whole (see
`F.linear_cross_entropy`)."""

from __future__ import annotations

import math
from typing import Any

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.nn.linear import Linear
from lamina.nn.loss import _Loss
from lamina.nn.registry import register_layer


@register_layer("LinearCrossEntropyLoss")
class LinearCrossEntropyLoss(_Loss):
    """Cross-entropy of `self.linear(input)` against `target`: `linear` maps in_features to
    num_classes (times prod(out_features), for a K-dimensional loss).

    Examples:
        >>> loss = nn.LinearCrossEntropyLoss(8, 100)
        >>> loss(lm.randn(4, 8), lm.tensor([1, 2, 3, 99])).shape, loss.linear.weight.shape
        (lamina.Size([]), lamina.Size([100, 8]))
    """

    _options = ("weight", "ignore_index", "label_smoothing")

    def __init__(self, in_features: int, num_classes: int, *, out_features: Any = (),
                 bias: bool = False, reduction: str = "mean", weight: Any = None,
                 ignore_index: int | None = None, label_smoothing: float = 0.0,
                 options: Any = None) -> None:
        if weight is not None and tuple(getattr(weight, "shape", ())) != (num_classes,):
            raise RuntimeError(f"LinearCrossEntropyLoss: expected weight shape to be "
                               f"{(num_classes,)}, got {tuple(getattr(weight, 'shape', ()))}")
        if not 0 <= label_smoothing <= 1:
            raise RuntimeError("LinearCrossEntropyLoss: expected label_smoothing to be in "
                               f"range [0, 1], got {label_smoothing}")
        super().__init__(reduction=reduction)
        self._weights(weight=weight)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing, self.options = (ignore_index,
                                                                 label_smoothing, options)
        self.linear = Linear(in_features, math.prod(self.out_features, start=num_classes),
                             bias)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        weight = self.linear.weight.reshape(self.num_classes, *self.out_features,
                                            self.linear.in_features)
        bias = (None if self.linear.bias is None
                else self.linear.bias.reshape(self.num_classes, *self.out_features))
        return F.linear_cross_entropy(input, weight, target, linear_bias=bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")

    def get_config(self) -> dict[str, Any]:
        return {"in_features": self.linear.in_features, "num_classes": self.num_classes,
                "out_features": list(self.out_features), "bias": self.linear.bias is not None,
                **super().get_config()}
