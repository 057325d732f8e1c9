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
from lamina.functions.operands import promote_all
from lamina.functions.product import matmul


def _checked(op: str, a: Tensor, b: Tensor, ndims: tuple[int, int],
             names: tuple[str, str]) -> Tensor:
    """a @ b after PyTorch's checks for `op`: each operand's number of dims, one dtype."""
    for x, ndim, name in zip((a, b), ndims, names):
        if x.ndim != ndim:
            raise RuntimeError(f"{op}: {name} must be a {ndim}-D tensor; got shape "
                               f"{tuple(x.shape)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"{op}: expected {names[0]} and {names[1]} to have the same dtype, "
                           f"but got {a.dtype} and {b.dtype}; convert one with "
                           ".to(other.dtype)")
    return matmul(a, b)


def mm(a: Tensor, b: Tensor) -> Tensor:
    """The product of two matrices (n, m) @ (m, p)."""
    return _checked("mm", a, b, (2, 2), ("self", "mat2"))


def bmm(a: Tensor, b: Tensor) -> Tensor:
    """Batched matrix products (B, n, m) @ (B, m, p); no broadcasting of the batch."""
    if a.ndim == b.ndim == 3 and a.shape[0] != b.shape[0]:
        raise RuntimeError(f"bmm: batch1 and batch2 must have the same batch size; got "
                           f"{tuple(a.shape)} and {tuple(b.shape)}")
    return _checked("bmm", a, b, (3, 3), ("batch1", "batch2"))


def mv(a: Tensor, v: Tensor) -> Tensor:
    """A matrix (n, m) times a vector (m,)."""
    return _checked("mv", a, v, (2, 1), ("self", "vec"))


def dot(a: Tensor, b: Tensor) -> Tensor:
    """The inner product of two 1-D tensors of one size."""
    return _checked("dot", a, b, (1, 1), ("self", "tensor"))


def outer(a: Tensor, b: Tensor) -> Tensor:
    """The outer product of two vectors: out[i, j] = a[i] * b[j]."""
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"outer: expected two 1-D tensors; got shapes {tuple(a.shape)} and "
                           f"{tuple(b.shape)}")
    return a.reshape(-1, 1) * b.reshape(1, -1)


def plus_scaled(input: Tensor, product: Tensor, beta: float, alpha: float) -> Tensor:  # noqa: A002
    """beta * input + alpha * product, input broadcast to the product's shape (addmm,
    addmv, addr, baddbmm, addbmm). With beta 0 the input is ignored, as PyTorch's: its NaN
    and inf do not reach the result, and its gradient is zeros."""
    from lamina.creation import as_tensor
    from lamina.functions.math import where

    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product + where(as_tensor(np.zeros((), bool)), input, 0.0)
    return (input if beta == 1 else input * beta) + product


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1,  # noqa: A002
          alpha: float = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product's shape."""
    return plus_scaled(input, mm(mat1, mat2), beta, alpha)


class Einsum(Function):
    complex_rule = "holomorphic"

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

    Examples:
        >>> lm.einsum("ij,jk->ik", lm.ones(2, 3), lm.ones(3, 4)).shape
        lamina.Size([2, 4])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    xs = promote_all([x if isinstance(x, Tensor) else Tensor(np.asarray(x)) for x in operands])
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
