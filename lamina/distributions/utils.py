"""`distributions.utils`, PyTorch's helpers that custom distributions import: parameters
broadcast together, probabilities and logits each from the other, a cached property, and
the lower triangle of a matrix as a vector and back.

    >>> from lamina.distributions.utils import broadcast_all
    >>> [t.shape for t in broadcast_all(lm.zeros(2, 1), 1.0, lm.ones(3))]
    [lamina.Size([2, 3]), lamina.Size([2, 3]), lamina.Size([2, 3])]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor
from lamina.dtypes import get_default_dtype
from lamina.tensor_functions import broadcast_tensors
from lamina.type_info import finfo

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]


def broadcast_all(*values: Any) -> tuple[Tensor, ...]:
    """Tensors and numbers broadcast to one shape; numbers take the tensors' float dtype
    (the default dtype where there is none).

    Examples:
        >>> from lamina.distributions.utils import broadcast_all
        >>> broadcast_all(lm.zeros(2), 3.0)[1]
        tensor([3., 3.])
    """
    if not all(isinstance(v, (Tensor, int, float, np.number)) for v in values):
        raise ValueError("broadcast_all: input arguments must all be instances of numbers, "
                         "lamina.Tensor or objects implementing __torch_function__")
    dtype = next((v.dtype for v in values if isinstance(v, Tensor) and v.dtype.kind == "f"),
                 get_default_dtype())
    tensors = [v if isinstance(v, Tensor) else as_tensor(v, dtype=dtype) for v in values]
    return tuple(broadcast_tensors(*tensors))


def clamp_probs(probs: Tensor) -> Tensor:
    """Probabilities kept eps away from 0 and 1.

    Examples:
        >>> from lamina.distributions.utils import clamp_probs
        >>> clamp_probs(lm.tensor([0.0, 1.0])).tolist()
        [1.1920928955078125e-07, 0.9999998807907104]
    """
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from logits: the sigmoid of each (binary), else the softmax over the
    last dim.

    Examples:
        >>> from lamina.distributions.utils import logits_to_probs
        >>> logits_to_probs(lm.zeros(2))
        tensor([0.5000, 0.5000])
    """
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Logits from probabilities: log(p / (1 - p)) (binary), else log p; clamped first.

    Examples:
        >>> from lamina.distributions.utils import probs_to_logits
        >>> probs_to_logits(lm.tensor([0.5]), is_binary=True)
        tensor([0.])
    """
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


class lazy_property:  # noqa: N801 - PyTorch's name
    """A property computed on first use and kept on the instance.

    Examples:
        >>> from lamina.distributions.utils import lazy_property
        >>> class Law:
        ...     @lazy_property
        ...     def mean(self):
        ...         print("computed"); return 1.0
        >>> law = Law(); law.mean; law.mean
        computed
        1.0
        1.0
    """

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def _tril_flat(n: int, diag: int) -> np.ndarray:
    """The flat indices of an n x n matrix's elements on or below diagonal `diag`, by rows."""
    rows, cols = np.tril_indices(n, diag)
    return rows * n + cols


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The elements on and below diagonal `diag` of the last two dims, row by row.

    Examples:
        >>> from lamina.distributions.utils import tril_matrix_to_vec
        >>> tril_matrix_to_vec(lm.tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor([1., 3., 4.])
    """
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"tril_matrix_to_vec: diag ({diag}) provided is outside [{-n}, "
                         f"{n - 1}]")
    return mat.flatten(-2)[..., as_tensor(_tril_flat(n, diag))]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of tril_matrix_to_vec: a square matrix with zeros elsewhere.

    Examples:
        >>> from lamina.distributions.utils import vec_to_tril_matrix
        >>> vec_to_tril_matrix(lm.tensor([1.0, 3.0, 4.0]))
        tensor([[1., 0.],
                [3., 4.]])
    """
    k = vec.shape[-1]
    # k = n (n + 1) / 2 + n diag - diag (diag + 1) / 2, solved for n
    n = round((-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * k + 4 * abs(diag) * (diag + 1))
               ** 0.5) / 2)
    flat = _tril_flat(n, diag)
    if flat.size != k:
        raise ValueError(f"vec_to_tril_matrix: {k} elements do not fill the triangle under "
                         f"diagonal {diag} of a square matrix")
    place = np.zeros((k, n * n), vec.dtype)
    place[np.arange(k), flat] = 1
    return (vec @ as_tensor(place)).reshape(*vec.shape[:-1], n, n)
