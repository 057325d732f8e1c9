"""PyTorch's transforms on vectors and matrices (re-exported by transforms.py): onto the
simplex (softmax, stick-breaking), onto Cholesky factors, correlation Cholesky factors and
positive-definite matrices, reshapes, and a base transform over more dims."""

from __future__ import annotations

import math
from typing import Any

from lamina.autograd.tensor import Tensor
from lamina.creation import eye, ones, zeros
from lamina.distributions import constraints
from lamina.distributions.transforms import Transform, _sum_rightmost
from lamina.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
from lamina.functions import softplus
from lamina.functions.padding import pad
from lamina.type_info import finfo


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim: onto the simplex, not bijective (no log-Jacobian).

    Examples:
        >>> lm.distributions.SoftmaxTransform()(lm.zeros(2))
        tensor([0.5000, 0.5000])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = False

    def _call(self, x: Tensor) -> Tensor:
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()


def _stick_offset(x: Tensor) -> Tensor:
    """log of K, K - 1, ..., 2 for a vector of K - 1: centres the sticks at uniform."""
    n = x.shape[-1]
    return (x.shape[-1] + 1 - ones(n, dtype=x.dtype).cumsum(-1)).log() if n else x


class StickBreakingTransform(Transform):
    """A vector of K - 1 reals onto the K-simplex by breaking a stick: bijective, as
    LogisticNormal uses it.

    Examples:
        >>> lm.distributions.StickBreakingTransform()(lm.zeros(2))
        tensor([0.3333, 0.3333, 0.3333])
    """

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x: Tensor) -> Tensor:
        z = (x - _stick_offset(x)).sigmoid()
        rest = (1 - z).cumprod(-1)
        return pad(z, (0, 1), value=1.0) * pad(rest, (1, 0), value=1.0)

    def _inverse(self, y: Tensor) -> Tensor:
        crop = y[..., :-1]
        remaining = (1 - crop.cumsum(-1)).clamp(min=finfo(y.dtype).tiny)
        return crop.log() - remaining.log() + _stick_offset(crop)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        x = x - _stick_offset(x)
        return (-x + x.sigmoid().log() + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Any) -> Any:
        return (*shape[:-1], shape[-1] + 1)

    def inverse_shape(self, shape: Any) -> Any:
        return (*shape[:-1], shape[-1] - 1)


class ReshapeTransform(Transform):
    """The rightmost dims of in_shape reshaped to out_shape (log-Jacobian 0).

    Examples:
        >>> lm.distributions.ReshapeTransform((4,), (2, 2))(lm.zeros(3, 4)).shape
        lamina.Size([3, 2, 2])
    """

    def __init__(self, in_shape: Any, out_shape: Any, cache_size: int = 0) -> None:
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("ReshapeTransform: in_shape and out_shape have different numbers "
                             "of elements")
        super().__init__(cache_size)
        self.domain = constraints.independent(constraints.real, len(self.in_shape))
        self.codomain = constraints.independent(constraints.real, len(self.out_shape))

    def _call(self, x: Tensor) -> Tensor:
        return x.reshape(*x.shape[:x.ndim - len(self.in_shape)], *self.out_shape)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.reshape(*y.shape[:y.ndim - len(self.out_shape)], *self.in_shape)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return zeros(*x.shape[:x.ndim - len(self.in_shape)], dtype=x.dtype)

    def forward_shape(self, shape: Any) -> Any:
        return (*shape[:len(shape) - len(self.in_shape)], *self.out_shape)

    def inverse_shape(self, shape: Any) -> Any:
        return (*shape[:len(shape) - len(self.out_shape)], *self.in_shape)


class IndependentTransform(Transform):
    """base_transform with its rightmost `reinterpreted_batch_ndims` batch dims taken as
    event dims: the log-Jacobian summed over them.

    Examples:
        >>> D = lm.distributions
        >>> t = D.IndependentTransform(D.ExpTransform(), 1)
        >>> t.log_abs_det_jacobian(lm.ones(2, 3), t(lm.ones(2, 3)))
        tensor([3., 3.])
    """

    def __init__(self, base_transform: Transform, reinterpreted_batch_ndims: int,
                 cache_size: int = 0) -> None:
        super().__init__(cache_size)
        self.base_transform, self.reinterpreted_batch_ndims = (base_transform,
                                                               reinterpreted_batch_ndims)
        self.domain = constraints.independent(base_transform.domain, reinterpreted_batch_ndims)
        self.codomain = constraints.independent(base_transform.codomain,
                                                reinterpreted_batch_ndims)
        self.bijective, self.sign = base_transform.bijective, base_transform.sign

    def _call(self, x: Tensor) -> Tensor:
        return self.base_transform(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def forward_shape(self, shape: Any) -> Any:
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape: Any) -> Any:
        return self.base_transform.inverse_shape(shape)

    def __repr__(self) -> str:
        return (f"IndependentTransform({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")


class LowerCholeskyTransform(Transform):
    """A square matrix onto a Cholesky factor: its strict lower triangle, and the
    exponential of its diagonal (not bijective on all matrices; no log-Jacobian).

    Examples:
        >>> lm.distributions.LowerCholeskyTransform()(lm.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky
    bijective = False

    def _call(self, x: Tensor) -> Tensor:
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """A square matrix onto a positive-definite one, L L^T of its LowerCholeskyTransform.

    Examples:
        >>> lm.distributions.PositiveDefiniteTransform()(lm.zeros(2, 2))
        tensor([[1., 0.],
                [0., 1.]])
    """

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite
    bijective = False

    def _call(self, x: Tensor) -> Tensor:
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y: Tensor) -> Tensor:
        from lamina.linalg import cholesky

        return LowerCholeskyTransform().inv(cholesky(y))


class CorrCholeskyTransform(Transform):
    """A vector of D (D - 1) / 2 reals onto the Cholesky factor of a D x D correlation
    matrix: tanh of each, then a stick-breaking of each row's unit norm (LKJCholesky's).

    Examples:
        >>> lm.distributions.CorrCholeskyTransform()(lm.zeros(1))
        tensor([[1., 0.],
                [0., 1.]])
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky

    def _call(self, x: Tensor) -> Tensor:
        eps = finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(-1 + eps, 1 - eps), diag=-1)
        rest = (1 - r * r).sqrt().cumprod(-1)
        return (r + eye(r.shape[-1], dtype=r.dtype)) * pad(rest[..., :-1], (1, 0), value=1.0)

    def _inverse(self, y: Tensor) -> Tensor:
        left = pad((1 - (y * y).cumsum(-1))[..., :-1], (1, 0), value=1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x: Tensor, y: Tensor) -> Tensor:
        left = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        sticks = 0.5 * left.log().sum(-1)
        tanh = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return sticks + tanh

    def forward_shape(self, shape: Any) -> Any:
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("CorrCholeskyTransform: the input's last dim must be D (D - 1) "
                             "/ 2 for some D")
        return (*shape[:-1], d, d)

    def inverse_shape(self, shape: Any) -> Any:
        return (*shape[:-2], shape[-1] * (shape[-1] - 1) // 2)
