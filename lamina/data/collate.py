"""`default_collate` and `default_convert`, as `torch.utils.data`'s: a list of samples
into one batch, field by field, tensors stacked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor


def default_collate(batch: Sequence[Any]) -> Any:
    """Samples into a batch with the samples' structure: tensors, arrays and numbers are
    stacked into a Tensor (Python floats as float64, ints as int64), dicts collate per
    key, tuples and lists per position (into a list, a namedtuple stays one), strings
    stay a list.

    Examples:
        >>> default_collate([(lm.zeros(2), 1), (lm.ones(2), 0)])
        [tensor([[0., 0.],
                [1., 1.]]), tensor([1, 0])]
    """
    first = batch[0]
    if isinstance(first, Tensor):
        return Tensor(np.stack([t.array for t in batch]))
    if isinstance(first, (np.ndarray, np.generic)) and first.dtype.kind not in "OSU":
        return Tensor(np.stack([np.asarray(b) for b in batch]))
    if isinstance(first, (bool, int, float)):
        return Tensor(np.asarray(batch, dtype=_python_dtype(first)))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if isinstance(first, Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # a namedtuple
        return type(first)(*(default_collate(list(f)) for f in zip(*batch)))
    if isinstance(first, Sequence):
        if len({len(s) for s in batch}) != 1:
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(f)) for f in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(first)}")


def _python_dtype(value: Any) -> Any:
    if isinstance(value, bool):
        return np.bool_
    return np.int64 if isinstance(value, int) else np.float64


def default_convert(data: Any) -> Any:
    """One sample's arrays as Tensors, its structure kept (a loader's conversion when it
    does not batch: `batch_size=None`).

    Examples:
        >>> default_convert({"x": np.zeros(2)})
        {'x': tensor([0., 0.], dtype=lamina.float64)}
    """
    if isinstance(data, np.ndarray) and data.dtype.kind not in "OSU":
        return Tensor(data)
    if isinstance(data, Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (tuple, list)):
        return [default_convert(d) for d in data]
    return data
