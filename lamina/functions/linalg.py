"""Matrix products with PyTorch's names and shape rules: mm, bmm, mv, dot, outer, addmm,
and einsum.

All but einsum are `matmul` with the shape checks PyTorch makes (mm takes exactly two
matrices, bmm two batches of them, ...). `Einsum` differentiates each operand with another
einsum: the gradient of operand k contracts the output's gradient with the others.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from lamina.autograd.function import Function
from lamina.autograd.tensor import Tensor
from lamina.functions.math import _operands, matmul, promote_all


def _same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    if a.dtype != b.dtype:
        raise RuntimeError(f"{op}: self and mat2 must have the same dtype, but got {a.dtype} "
                           f"and {b.dtype}; convert one with .to(other.dtype)")


def _need(op: str, x: Tensor, ndim: int, what: str) -> None:
    if x.ndim != ndim:
        raise RuntimeError(f"{op}: {what} must be a {ndim}-D tensor; got shape "
                           f"{tuple(x.shape)}")


def mm(a: Tensor, b: Tensor) -> Tensor:
    """The product of two matrices (n, m) @ (m, p)."""
    _need("mm", a, 2, "self")
    _need("mm", b, 2, "mat2")
    _same_dtype("mm", a, b)
    return matmul(a, b)


def bmm(a: Tensor, b: Tensor) -> Tensor:
    """Batched matrix products (B, n, m) @ (B, m, p); no broadcasting of the batch."""
    _need("bmm", a, 3, "batch1")
    _need("bmm", b, 3, "batch2")
    _same_dtype("bmm", a, b)
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"bmm: batch1 and batch2 must have the same batch size; got "
                           f"{tuple(a.shape)} and {tuple(b.shape)}")
    return matmul(a, b)


def mv(a: Tensor, v: Tensor) -> Tensor:
    """A matrix (n, m) times a vector (m,)."""
    _need("mv", a, 2, "self")
    _need("mv", v, 1, "vec")
    _same_dtype("mv", a, v)
    return matmul(a, v)


def dot(a: Tensor, b: Tensor) -> Tensor:
    """The inner product of two 1-D tensors of one size."""
    _need("dot", a, 1, "self")
    _need("dot", b, 1, "tensor")
    if a.dtype != b.dtype:
        raise RuntimeError(f"dot: expected both vectors to have same dtype, but found "
                           f"{a.dtype} and {b.dtype}")
    return matmul(a, b)


def outer(a: Tensor, b: Tensor) -> Tensor:
    """The outer product of two vectors: out[i, j] = a[i] * b[j]."""
    _need("outer", a, 1, "self")
    _need("outer", b, 1, "vec2")
    return a.reshape(-1, 1) * b.reshape(1, -1)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1,  # noqa: A002
          alpha: float = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape."""
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product + input * 0
    return (input if beta == 1 else input * beta) + product


class Einsum(Function):
    def __init__(self, inputs: list[str], output: str) -> None:
        self.subs, self.out = inputs, output

    def forward(self, *xs: Any) -> Any:
        self.save_for_backward(*xs)
        return np.asarray(np.einsum(f"{','.join(self.subs)}->{self.out}", *xs,
                                    optimize=len(xs) > 2))

    def backward(self, gy: Any) -> tuple[Any, ...]:
        xs = self.saved_tensors
        grads = []
        for k, (sub, x) in enumerate(zip(self.subs, xs)):
            if not self.needs_input_grad[k]:
                grads.append(None)
                continue
            others = [(s, v) for j, (s, v) in enumerate(zip(self.subs, xs)) if j != k]
            present = set(self.out).union(*[set(s) for s, _ in others])
            kept = "".join(c for c in dict.fromkeys(sub) if c in present)
            eq = ",".join([self.out] + [s for s, _ in others]) + "->" + kept
            g = np.einsum(eq, gy, *[v for _, v in others], optimize=len(others) > 1)
            # letters of this operand that no other term has: the gradient is constant
            # along them, so it broadcasts back
            g = np.broadcast_to(g.reshape([n if c in kept else 1 for c, n in zip(sub, x.shape)]),
                                x.shape)
            grads.append(np.ascontiguousarray(g).astype(x.dtype, copy=False))
        return tuple(grads)


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation (`"bij,bjk->bik"`), with `...` for leading dims.

    Example:
        >>> lm.einsum("ij,jk->ik", lm.ones(2, 3), lm.ones(3, 4)).shape
        lamina.Size([2, 4])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    xs = promote_all([x if isinstance(x, Tensor) else Tensor(np.asarray(x)) for x in operands])
    if len(xs) == 2:
        xs = list(_operands(*xs))
    inputs, output = _parse(equation.replace(" ", ""), xs)
    for sub in inputs:
        if len(set(sub)) != len(sub):
            raise NotImplementedError(f"einsum: a repeated index within one operand ({sub}) "
                                      "is not supported; take the diagonal first")
    return Einsum(inputs, output).apply(*xs)


def _parse(equation: str, xs: list[Tensor]) -> tuple[list[str], str]:
    """The subscripts with `...` spelt out as letters, and the output (implicit: the
    letters used once, in order)."""
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(xs):
        raise ValueError(f"einsum(): {len(inputs)} operands in the equation, {len(xs)} given")
    free = [c for c in string.ascii_letters if c not in equation]
    n_ell = max([x.ndim - len(s.replace("...", "")) for s, x in zip(inputs, xs)
                 if "..." in s] or [0])
    ell = "".join(free[:n_ell])
    spelt = []
    for s, x in zip(inputs, xs):
        if "..." in s:
            k = x.ndim - len(s.replace("...", ""))
            s = s.replace("...", ell[n_ell - k:])
        spelt.append(s)
    if arrow:
        out = rhs.replace("...", ell)
    else:
        letters = "".join(spelt)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                   and c not in ell))
    return spelt, out
