"""Standardize: features shifted and scaled by the training data's statistics, measured
once (or streamed over batches) and kept as buffers that save and export with the
weights."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor
from lamina.errors import ShapeError
from lamina.nn.layer import Layer
from lamina.nn.registry import register_layer


@register_layer("Standardize")
class Standardize(Layer):
    """Shift and scale each feature to mean 0 and standard deviation 1 by statistics of the
    training data, y = (x - mean) / std: scikit-learn's StandardScaler as a layer (Keras's
    Normalization). Put it first, for features on different scales.

    The statistics are buffers (`mean`, `std`, and `count`, the samples they were measured
    on), so they are saved with the weights and exported to ONNX, and whoever loads the
    model standardises its input as it was trained. They come from `adapt(data)`, which a
    job runs on its training split (the validation hold-out left out) when the layer is
    the model's first; or from `mean` and `std` given in the config. A feature that is
    constant in the data keeps std 1: it is only centred. Calling the layer before either
    is an error, never a silent identity.

    Args:
        num_features: the length of the feature axis.
        axis: the feature axis: 1 for (N, features) and for channels of (N, C, ...), as
            batch norm; -1 for batch-first sequences (N, T, features).
        mean, std: fixed statistics (num_features numbers each, or one for all), such as a
            dataset's published ones; then adapt is not needed.

    Examples:
        >>> scale = nn.Standardize(3).adapt(x_train)        # x_train (N, 3)
        >>> scale(lm.tensor(x_train)).array.std(axis=0)      # ~[1, 1, 1]
    """

    def __init__(self, num_features: int, axis: int = 1,
                 mean: float | list[float] | None = None,
                 std: float | list[float] | None = None) -> None:
        super().__init__()
        if num_features < 1:
            raise ValueError(f"Standardize: num_features must be >= 1; got {num_features}")
        if axis == 0:
            raise ValueError("Standardize: axis 0 is the batch; the features lie on another "
                             "axis (1 for (N, features), -1 for (N, T, features))")
        if (mean is None) != (std is None):
            raise ValueError("Standardize: give both mean and std, or neither (then adapt)")
        self.num_features, self.axis = num_features, axis
        self.fixed = mean is not None
        self.register_buffer("mean", self._vector("mean", 0.0 if mean is None else mean))
        self.register_buffer("std", self._vector("std", 1.0 if std is None else std))
        self.register_buffer("count", np.zeros((), np.int64))
        if (self.std.array <= 0).any():
            raise ValueError(f"Standardize: std must be > 0; got {std}")

    def _vector(self, name: str, value: float | list[float]) -> np.ndarray:
        out = np.asarray(value, np.float32)
        if out.ndim == 0:  # one value for every feature
            out = np.full(self.num_features, out)
        if out.shape != (self.num_features,):
            raise ValueError(f"Standardize: {name} must have num_features="
                             f"{self.num_features} values; got {len(out)}")
        return out

    @property
    def ready(self) -> bool:
        """Whether mean and std are set: given in the config, adapted, or loaded."""
        return self.fixed or int(self.count.array) > 0

    def adapt(self, data: Any) -> Standardize:
        """Measure mean and (population) std of each feature over `data`, replacing any
        earlier statistics: an array or tensor (N, ...), or an iterable of batches (arrays,
        tensors, or tuples whose first item is the input, as a DataLoader yields). Sums
        run in float64, batch by batch (Chan et al.'s update), so the result does not
        depend on the batch size beyond rounding. Returns the layer."""
        n, mean, m2 = 0, np.zeros(self.num_features), np.zeros(self.num_features)
        for x in _batches(data):
            rows = self._rows(x)
            k = len(rows)
            if k == 0:
                continue
            mu = rows.mean(axis=0)
            delta, total = mu - mean, n + k
            mean += delta * k / total
            m2 += np.square(rows - mu).sum(axis=0) + np.square(delta) * n * k / total
            n = total
        if n == 0:
            raise ValueError("Standardize.adapt: the data holds no samples")
        std = np.sqrt(m2 / n)
        # Below float32's resolution of the mean, a spread is rounding, not data.
        std[std <= np.finfo(np.float32).eps * np.abs(mean)] = 1.0
        self.mean.array[...], self.std.array[...], self.count.array[...] = mean, std, n
        return self

    def _rows(self, x: Any) -> np.ndarray:
        """x as float64 (values, features), the feature axis last."""
        x = np.asarray(getattr(x, "array", x), np.float64)
        if (x.ndim < 2 or not -x.ndim <= self.axis < x.ndim
                or x.shape[self.axis] != self.num_features):
            raise ShapeError(f"Standardize.adapt: expected {self.num_features} features on "
                             f"axis {self.axis} of a batch; got shape {tuple(x.shape)}")
        return np.moveaxis(x, self.axis, -1).reshape(-1, self.num_features)

    def forward(self, x: Tensor) -> Tensor:
        if not self.ready:
            raise RuntimeError(
                "Standardize: mean and std are not set. Call layer.adapt(x_train) first (a "
                "job does this when the layer is the model's first), load a checkpoint, or "
                "give mean and std in its config.")
        return F.standardize(x, self.mean.array, self.std.array, self.axis)

    def _fits(self, x: Any, *rest: Any) -> str | None:
        shape = getattr(x, "shape", ())
        return (f"num_features={shape[self.axis]}"
                if -len(shape) <= self.axis < len(shape) else None)

    def get_config(self) -> dict[str, Any]:
        fixed = ({"mean": self.mean.array.tolist(), "std": self.std.array.tolist()}
                 if self.fixed else {})
        return {"num_features": self.num_features, "axis": self.axis, **fixed}


def _batches(data: Any) -> Iterator[Any]:
    """The inputs of `data`: itself if an array or tensor, else each batch's first item."""
    if isinstance(data, (np.ndarray, Tensor)):
        yield data
        return
    for batch in data:
        yield batch[0] if isinstance(batch, (tuple, list)) else batch
