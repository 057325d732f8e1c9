"""More of PyTorch's Tensor methods, each a few existing ops: the remaining inverse
hyperbolic names, sinc, ldexp, gcd/lcm, vdot, kron, cross, diag_embed, take, index_put,
masked_scatter, and the predicates is_nonzero, is_same_size, retains_grad."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lamina.functions.tensor_methods.shared import constant, where


class SpecialMethods:
    __slots__ = ()

    def arcsinh(self) -> Any:
        """asinh().

        Examples:
            >>> lm.tensor([0.0]).arcsinh()
            tensor([0.])
        """
        return self.asinh()

    def arctanh(self) -> Any:
        """atanh().

        Examples:
            >>> lm.tensor([0.0]).arctanh()
            tensor([0.])
        """
        return self.atanh()

    def sinc(self) -> Any:
        """sin(pi x) / (pi x), and 1 at 0 (with a gradient of 0 there, as PyTorch's).

        Examples:
            >>> lm.tensor([0.0, 0.5]).sinc()
            tensor([1.0000, 0.6366])
        """
        zero = self == 0
        safe = where(zero, 1.0, self) * math.pi
        return where(zero, 1.0, safe.sin() / safe)

    def i0(self) -> Any:
        """The modified Bessel function of the first kind of order 0 (special.i0).

        Examples:
            >>> lm.tensor([0.0, 1.0]).i0()
            tensor([1.0000, 1.2661])
        """
        from lamina.functions.bessel import bessel_i_op

        return bessel_i_op(self, 0, False)

    def igamma(self, other: Any) -> Any:
        """The regularised lower incomplete gamma function of self and other (gammainc).

        Examples:
            >>> lm.tensor([1.0]).igamma(lm.tensor([1.0]))
            tensor([0.6321])
        """
        from lamina.functions.special_more import gammainc

        return gammainc(self, other)

    def igammac(self, other: Any) -> Any:
        """The regularised upper incomplete gamma function of self and other (gammaincc).

        Examples:
            >>> lm.tensor([1.0]).igammac(lm.tensor([1.0]))
            tensor([0.3679])
        """
        from lamina.functions.special_more import gammaincc

        return gammaincc(self, other)

    def ldexp(self, other: Any) -> Any:
        """self * 2 ** other.

        Examples:
            >>> lm.tensor([1.5]).ldexp(lm.tensor([3]))
            tensor([12.])
        """
        two = constant(np.asarray(2.0, self.dtype if self.dtype.kind == "f" else np.float32))
        return self * two ** other

    def gcd(self, other: Any) -> Any:
        """The greatest common divisor, elementwise, of integer tensors.

        Examples:
            >>> lm.tensor([12, 7]).gcd(lm.tensor([8, 21]))
            tensor([4, 7])
        """
        return constant(np.gcd(self.numpy(), np.asarray(getattr(other, "array", other))))

    def lcm(self, other: Any) -> Any:
        """The least common multiple, elementwise, of integer tensors.

        Examples:
            >>> lm.tensor([4, 3]).lcm(lm.tensor([6, 5]))
            tensor([12, 15])
        """
        return constant(np.lcm(self.numpy(), np.asarray(getattr(other, "array", other))))

    def vdot(self, other: Any) -> Any:
        """dot() of two 1-D tensors (for real ones, the same).

        Examples:
            >>> lm.tensor([1.0, 2.0]).vdot(lm.tensor([3.0, 4.0]))
            tensor(11.)
        """
        return self.dot(other)

    def kron(self, other: Any) -> Any:
        """The Kronecker product: each element of self times the whole of other, in blocks.

        Examples:
            >>> lm.eye(2).kron(lm.ones(1, 2))
            tensor([[1., 1., 0., 0.],
                    [0., 0., 1., 1.]])
        """
        nd = max(self.ndim, other.ndim)
        a = self.reshape((1,) * (nd - self.ndim) + tuple(self.shape))
        b = other.reshape((1,) * (nd - other.ndim) + tuple(other.shape))
        # a's dims interleaved with b's: a[i, j] * b[k, l] at (i, k, j, l), then merged
        a_axes = [s for d in a.shape for s in (d, 1)]
        b_axes = [s for d in b.shape for s in (1, d)]
        out = a.reshape(a_axes) * b.reshape(b_axes)
        return out.reshape([x * y for x, y in zip(a.shape, b.shape)])

    def cross(self, other: Any, dim: int | None = None) -> Any:
        """The cross product of 3-vectors along `dim` (the first dim of size 3 where None).

        Examples:
            >>> lm.tensor([1.0, 0.0, 0.0]).cross(lm.tensor([0.0, 1.0, 0.0]))
            tensor([0., 0., 1.])
        """
        from lamina.linalg import cross

        if dim is None:
            sizes = np.broadcast_shapes(tuple(self.shape), tuple(other.shape))
            dim = next((d for d, s in enumerate(sizes) if s == 3), -1)
        return cross(self, other, dim=dim)

    def diag_embed(self, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:
        """Each last-dim vector as the diagonal (`offset` above it) of a matrix, the
        matrices in dims dim1 and dim2 of the result.

        Examples:
            >>> lm.tensor([[1.0, 2.0]]).diag_embed()
            tensor([[[1., 0.],
                     [0., 2.]]])
        """
        n = self.shape[-1] + abs(offset)
        # place[j] is the (n, n) matrix with a 1 where element j of the vector goes
        place = np.zeros((self.shape[-1], n, n), self.dtype)
        rows, cols = np.nonzero(np.eye(n, k=offset))
        place[np.arange(self.shape[-1]), rows, cols] = 1
        out = (self.unsqueeze(-1).unsqueeze(-1) * constant(place)).sum(-3)
        nd = out.ndim
        return out.movedim((nd - 2, nd - 1), (dim1 % nd, dim2 % nd))

    def take(self, index: Any) -> Any:
        """The elements at `index` of the flattened tensor, in index's shape.

        Examples:
            >>> lm.tensor([[1, 2], [3, 4]]).take(lm.tensor([0, 3]))
            tensor([1, 4])
        """
        return self.reshape(-1)[index]

    def index_put(self, indices: Any, values: Any, accumulate: bool = False) -> Any:
        """A copy with `values` at `indices` (a tuple of index tensors, one per leading
        dim); with `accumulate`, added there, repeated indices adding up.

        Examples:
            >>> lm.zeros(3).index_put((lm.tensor([0, 0]),), lm.tensor(1.0), accumulate=True)
            tensor([2., 0., 0.])
        """
        from lamina.functions.indexing import setitem

        indices = tuple(indices)
        if not accumulate:
            return setitem(self, indices, values)
        k = len(indices)
        arrays = np.broadcast_arrays(*[np.asarray(getattr(i, "array", i)) for i in indices])
        flat = np.ravel_multi_index(tuple(arrays), tuple(self.shape[:k]), mode="wrap")
        rest = tuple(self.shape[k:])
        values = values if hasattr(values, "expand") else constant(np.asarray(values, self.dtype))
        values = values.expand(*flat.shape, *rest).reshape(-1, *rest)
        rows = self.reshape(-1, *rest)
        return rows.index_add(0, constant(flat.reshape(-1)), values).reshape(self.shape)

    def index_put_(self, indices: Any, values: Any, accumulate: bool = False) -> Any:
        """index_put written into this tensor; returns self.

        Examples:
            >>> x = lm.zeros(3); x.index_put_((lm.tensor([1]),), lm.tensor(5.0)) is x
            True
        """
        return self._inplace(lambda t: t.index_put(indices, values, accumulate))

    def masked_scatter(self, mask: Any, source: Any) -> Any:
        """A copy with source's first elements, in order, where mask is true.

        Examples:
            >>> lm.zeros(4).masked_scatter(lm.tensor([True, False, True, False]),
            ...                            lm.tensor([1.0, 2.0, 3.0]))
            tensor([1., 0., 2., 0.])
        """
        from lamina.functions.indexing import setitem

        picked = np.broadcast_to(np.asarray(getattr(mask, "array", mask), bool), self.shape)
        count = int(picked.sum())
        if count > source.numel():
            raise RuntimeError(f"masked_scatter: the mask selects {count} elements but "
                               f"source has {source.numel()}")
        return setitem(self, picked, source.reshape(-1)[:count])

    def det(self) -> Any:
        """linalg.det(self).

        Examples:
            >>> lm.tensor([[2.0, 0.0], [0.0, 3.0]]).det()
            tensor(6.)
        """
        from lamina.linalg import det

        return det(self)

    def slogdet(self) -> Any:
        """(sign, logabsdet) of the determinant, a named tuple.

        Examples:
            >>> lm.tensor([[2.0, 0.0], [0.0, 3.0]]).slogdet().sign
            tensor(1.)
        """
        from lamina import return_types
        from lamina.linalg import slogdet

        return return_types.slogdet(*slogdet(self))

    def logdet(self) -> Any:
        """log(det(self)): NaN where the determinant is negative, -inf where it is 0.

        Examples:
            >>> lm.tensor([[1.0, 0.0], [0.0, 1.0]]).logdet()
            tensor(0.)
        """
        sign, logabs = self.slogdet()
        nan_or_inf = where(sign == 0, float("-inf"), float("nan"))
        return where(sign > 0, logabs, nan_or_inf)

    def is_nonzero(self) -> bool:
        """Whether this one-element tensor is not zero.

        Examples:
            >>> lm.tensor([2.0]).is_nonzero()
            True
        """
        if self.numel() != 1:
            raise RuntimeError(f"is_nonzero: the tensor must have one element; it has "
                               f"{self.numel()}")
        return bool(self.array.reshape(-1)[0] != 0)

    def is_same_size(self, other: Any) -> bool:
        """Whether other has this tensor's shape.

        Examples:
            >>> lm.zeros(2).is_same_size(lm.ones(2))
            True
        """
        return tuple(self.shape) == tuple(other.shape)

    @property
    def retains_grad(self) -> bool:
        """Whether retain_grad() was called on this non-leaf tensor.

        Examples:
            >>> h = lm.ones(1, requires_grad=True) * 2; h.retain_grad(); h.retains_grad
            True
        """
        return bool(self._extra and self._extra.get("retains_grad"))
