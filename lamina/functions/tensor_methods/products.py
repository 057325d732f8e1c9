"""Products as Tensor methods: matmul, mm, bmm, mv, dot, outer (ger) and addmm; the
fused-looking products PyTorch names (addmv, addr, addbmm, baddbmm), matrix_power, and
the statistics of rows as methods (cov, corrcoef), each built from existing ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.tensor_methods.inplace import _inplace


def _plus_scaled(self: Any, product: Any, beta: float, alpha: float) -> Any:
    from lamina.functions.linalg import plus_scaled

    return plus_scaled(self, product, beta, alpha)


class ProductMethods:
    __slots__ = ()

    def matmul(self, other: Any) -> Any:
        """The matrix product with broadcasting (`@`).

        Examples:
            >>> lm.ones(2, 3).matmul(lm.ones(3, 4)).shape
            lamina.Size([2, 4])
        """
        from lamina.functions.product import matmul

        return matmul(self, other)

    def mm(self, other: Any) -> Any:
        """The product of two matrices.

        Examples:
            >>> lm.eye(2).mm(lm.ones(2, 2))
            tensor([[1., 1.],
                    [1., 1.]])
        """
        from lamina.functions.linalg import mm

        return mm(self, other)

    def bmm(self, other: Any) -> Any:
        """Batched matrix products of two 3-d tensors.

        Examples:
            >>> lm.ones(5, 2, 3).bmm(lm.ones(5, 3, 4)).shape
            lamina.Size([5, 2, 4])
        """
        from lamina.functions.linalg import bmm

        return bmm(self, other)

    def mv(self, vec: Any) -> Any:
        """A matrix times a vector.

        Examples:
            >>> lm.eye(2).mv(lm.tensor([1.0, 2.0]))
            tensor([1., 2.])
        """
        from lamina.functions.linalg import mv

        return mv(self, vec)

    def dot(self, other: Any) -> Any:
        """The inner product of two vectors.

        Examples:
            >>> lm.tensor([1.0, 2.0]).dot(lm.tensor([3.0, 4.0]))
            tensor(11.)
        """
        from lamina.functions.linalg import dot

        return dot(self, other)

    def outer(self, other: Any) -> Any:
        """The outer product of two vectors.

        Examples:
            >>> lm.tensor([1, 2]).outer(lm.tensor([1, 10]))
            tensor([[ 1, 10],
                    [ 2, 20]])
        """
        from lamina.functions.linalg import outer

        return outer(self, other)

    ger = outer

    def addmm(self, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1) -> Any:
        """beta * self + alpha * (mat1 @ mat2).

        Examples:
            >>> lm.ones(2, 2).addmm(lm.eye(2), lm.eye(2), beta=0.5)
            tensor([[1.5000, 0.5000],
                    [0.5000, 1.5000]])
        """
        from lamina.functions.linalg import addmm

        return addmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def addmv(self, mat: Any, vec: Any, *, beta: float = 1, alpha: float = 1) -> Any:
        """beta * self + alpha * (mat @ vec); with beta 0, self is ignored (NaN included).

        Examples:
            >>> lm.ones(2).addmv(lm.eye(2), lm.tensor([1.0, 2.0]), alpha=2)
            tensor([3., 5.])
        """
        return _plus_scaled(self, mat.mv(vec), beta, alpha)

    def addr(self, vec1: Any, vec2: Any, *, beta: float = 1, alpha: float = 1) -> Any:
        """beta * self + alpha * outer(vec1, vec2).

        Examples:
            >>> lm.zeros(2, 2).addr(lm.tensor([1.0, 2.0]), lm.tensor([1.0, 0.0]))
            tensor([[1., 0.],
                    [2., 0.]])
        """
        return _plus_scaled(self, vec1.outer(vec2), beta, alpha)

    def baddbmm(self, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1) -> Any:
        """beta * self + alpha * (batch1 @ batch2), for (B, n, m) and (B, m, p) batches.

        Examples:
            >>> lm.zeros(1, 2, 2).baddbmm(lm.ones(1, 2, 3), lm.ones(1, 3, 2)).tolist()
            [[[3.0, 3.0], [3.0, 3.0]]]
        """
        return _plus_scaled(self, batch1.bmm(batch2), beta, alpha)

    def addbmm(self, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1) -> Any:
        """beta * self + alpha * the sum over the batch of batch1[b] @ batch2[b].

        Examples:
            >>> lm.zeros(2, 2).addbmm(lm.ones(3, 2, 1), lm.ones(3, 1, 2))
            tensor([[3., 3.],
                    [3., 3.]])
        """
        return _plus_scaled(self, batch1.bmm(batch2).sum(0), beta, alpha)

    def matrix_power(self, n: int) -> Any:
        """The square matrix (or stack of them) to the integer power n: repeated squaring;
        n = 0 gives the identity, a negative n powers the inverse.

        Examples:
            >>> lm.tensor([[1.0, 1.0], [0.0, 1.0]]).matrix_power(3)
            tensor([[1., 3.],
                    [0., 1.]])
        """
        from lamina.creation import eye

        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"matrix_power: n must be an int; got {n!r}")
        if self.dim() < 2 or self.shape[-1] != self.shape[-2]:
            raise RuntimeError(f"matrix_power: expected a square matrix or a stack of them; "
                               f"got shape {tuple(self.shape)}")
        if n == 0:  # the identity, with a zero gradient (self's NaN not reaching it)
            from lamina.functions.tensor_methods.shared import constant, where

            identity = eye(self.shape[-1], dtype=self.dtype).expand(*self.shape)
            return where(constant(np.zeros((), bool)), self, identity)
        base = self if n > 0 else self.inverse()
        result, n = None, abs(n)
        while n:
            if n & 1:
                result = base if result is None else result @ base
            n >>= 1
            if n:
                base = base @ base
        return result

    def cov(self, *, correction: int = 1, fweights: Any = None, aweights: Any = None) -> Any:
        """The covariance matrix of the rows (variables) over the columns (observations):
        `lamina.cov(self, ...)`.

        Examples:
            >>> lm.tensor([[0.0, 2.0], [1.0, 1.0]]).cov()
            tensor([[2., 0.],
                    [0., 0.]])
        """
        from lamina.tensor_functions_stats import cov

        return cov(self, correction=correction, fweights=fweights, aweights=aweights)

    def corrcoef(self) -> Any:
        """Pearson's correlation coefficients of the rows: `lamina.corrcoef(self)`.

        Examples:
            >>> lm.tensor([[0.0, 1.0, 2.0], [0.0, 2.0, 4.0]]).corrcoef()
            tensor([[1., 1.],
                    [1., 1.]])
        """
        from lamina.tensor_functions_stats import corrcoef

        return corrcoef(self)

    def diagflat(self, offset: int = 0) -> Any:
        """The flattened tensor on a diagonal of a square matrix: `lamina.diagflat(self)`.

        Examples:
            >>> lm.tensor([1.0, 2.0]).diagflat()
            tensor([[1., 0.],
                    [0., 2.]])
        """
        from lamina.tensor_functions_extra import diagflat

        return diagflat(self, offset)

    addr_, addbmm_ = _inplace("addr", "x[0], x[1]"), _inplace("addbmm", "x[None], x[None]")

    def addmv_(self, mat: Any, vec: Any, *, beta: float = 1, alpha: float = 1) -> Any:
        """addmv written into this vector; returns self.

        Examples:
            >>> v = lm.ones(2)
            >>> v.addmv_(lm.eye(2), lm.tensor([1.0, 2.0])) is v, v
            (True, tensor([2., 3.]))
        """
        return self._inplace(lambda t: t.addmv(mat, vec, beta=beta, alpha=alpha))

    def baddbmm_(self, batch1: Any, batch2: Any, *, beta: float = 1, alpha: float = 1) -> Any:
        """baddbmm written into this (B, n, p) tensor; returns self.

        Examples:
            >>> b = lm.zeros(1, 2, 2)
            >>> b.baddbmm_(lm.ones(1, 2, 3), lm.ones(1, 3, 2)) is b
            True
        """
        return self._inplace(lambda t: t.baddbmm(batch1, batch2, beta=beta, alpha=alpha))
