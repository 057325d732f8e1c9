"""Differentiable backward rules of the matrix functions whose gradients are matrix
products of their inverse: inv, solve, det and slogdet (see lamina.functions.derivatives
for what a rule is), and of standardisation by fixed statistics."""

from __future__ import annotations

from typing import Any

from lamina.autograd.higher_order import derivative
from lamina.autograd.tensor import Tensor
from lamina.functions import math as m
from lamina.functions.decomposition import Det, Inv, Slogdet, Solve
from lamina.functions.derivatives import constant, summed_to
from lamina.functions.normalization import Standardize


def _mT(A: Tensor) -> Tensor:
    return A.transpose(-1, -2)


@derivative(Inv)
def _inv(f: Any, g: Tensor) -> Tensor:
    X = Inv().apply(f.inputs[0])
    return -m.matmul(m.matmul(_mT(X), g), _mT(X))


@derivative(Solve)
def _solve(f: Any, g: Tensor) -> tuple[Any, Any]:
    A, B = f.inputs
    X = Solve().apply(A, B)
    gB = Solve().apply(_mT(A), g)
    return (summed_to(-m.matmul(gB, _mT(X)), (A.shape, A.dtype)),
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
