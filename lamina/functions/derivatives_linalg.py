"""Differentiable backward rules of the matrix functions whose gradients are matrix
products of their inverse (inv, solve, det, slogdet), of the products (prod, cumprod),
the p-norms and standardisation by fixed statistics (see lamina.functions.derivatives for
what a rule is)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.higher_order import derivative
from lamina.autograd.tensor import Tensor
from lamina.functions import array
from lamina.functions import axis_reductions as red
from lamina.functions import math as m
from lamina.functions import product as mm
from lamina.functions import unary as un
from lamina.functions.decomposition import Det, Inv, Slogdet, Solve
from lamina.functions.derivatives import constant, summed_to
from lamina.functions.derivatives_layers import through
from lamina.functions.feature_scaling import Standardize
from lamina.functions.instance_norm import RunningStats
from lamina.functions.pnorm import PNorm
from lamina.functions.reduction import CumProd, Prod


def _mT(A: Tensor) -> Tensor:
    return A.transpose(-1, -2)


@derivative(Inv)
def _inv(f: Any, g: Tensor) -> Tensor:
    X = Inv().apply(f.inputs[0])
    return -mm.matmul(mm.matmul(_mT(X), g), _mT(X))


@derivative(Solve)
def _solve(f: Any, g: Tensor) -> tuple[Any, Any]:
    A, B = f.inputs
    X = Solve().apply(A, B)
    gB = Solve().apply(_mT(A), g)
    return (summed_to(-mm.matmul(gB, _mT(X)), (A.shape, A.dtype)),
            summed_to(gB, (tuple(f.b_shape), B.dtype)))


@derivative(Det)
def _det(f: Any, g: Tensor) -> Tensor:
    """det(A) inv(A)^T: an invertible A's adjugate (Det.backward's SVD form also takes a
    singular one, whose second derivative this does not)."""
    A = f.inputs[0]
    return (g * Det().apply(A)).unsqueeze(-1).unsqueeze(-1) * _mT(Inv().apply(A))


@derivative(Slogdet)
def _slogdet(f: Any, g_sign: Tensor, g_logabs: Tensor) -> Tensor:
    return g_logabs.unsqueeze(-1).unsqueeze(-1) * _mT(Inv().apply(f.inputs[0]))


@derivative(Standardize)
def _standardize(f: Any, gy: Tensor) -> Tensor:
    return gy / constant(f.scale, gy)


@derivative(RunningStats)
def _running_stats(f: Any, gy: Tensor) -> Tensor:
    return gy  # the identity, which updates instance norm's statistics on the way


@derivative(Prod)
def _prod(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """The product as a chain of multiplications (exact with zeros, as Prod.backward)."""
    def build(x: Tensor) -> Tensor:
        parts = x.movedim(f.axis, 0)
        y = parts[0]
        for k in range(1, parts.shape[0]):
            y = y * parts[k]
        return y.unsqueeze(f.axis) if f.keepdims else y
    return through(f, (gy,), build)


@derivative(CumProd)
def _cumprod(f: Any, gy: Tensor) -> tuple[Any, ...]:
    def build(x: Tensor) -> Tensor:
        parts = x.movedim(f.axis, 0)
        ys = [parts[0]]
        for k in range(1, parts.shape[0]):
            ys.append(ys[-1] * parts[k])
        return array.stack(ys, f.axis)
    return through(f, (gy,), build)


@derivative(PNorm)
def _pnorm(f: Any, gy: Tensor) -> tuple[Any, ...]:
    """(sum |x|^p)^(1/p) with PNorm's zeros: |x|^p's gradient 0 where x is 0 (p < 1), the
    norm's 0 where the norm is 0; p = 0 (a count) has none."""
    if f.p == 0:
        return (Tensor(np.zeros(f.inputs[0].shape, f.inputs[0].dtype)),)

    def build(x: Tensor) -> Tensor:
        at_zero = x.array == 0
        a = m.where(at_zero, constant(1, x), un.abs(x))
        powered = m.where(at_zero, constant(0, x), m.PowScalar(f.p).apply(a))
        s = red.sum(powered, f.axes, keepdims=True)
        empty = s.array == 0
        y = m.where(empty, constant(0, x),
                    m.PowScalar(1 / f.p).apply(m.where(empty, constant(1, x), s)))
        return y if f.keepdims else array.reshape(y, tuple(gy.shape))
    return through(f, (gy,), build)
