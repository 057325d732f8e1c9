"""Tensor methods that cut, tile and window a tensor, built from indexing, narrow and
repeat (so their gradients are those ops'): ravel, tile, select, tensor_split and the
h/v/dsplit family, take_along_dim, unfold, diff, rot90, sum_to_size, index_copy."""

from __future__ import annotations

from typing import Any

import numpy as np


def _dim(dim: int, ndim: int, op: str) -> int:
    from lamina.functions.shape import wrap_dim

    return wrap_dim(dim, ndim, op)


class SlicingMethods:
    __slots__ = ()

    def ravel(self) -> Any:
        """The elements as one dim, in row-major order.

        Examples:
            >>> lm.tensor([[1, 2], [3, 4]]).ravel()
            tensor([1, 2, 3, 4])
        """
        return self.reshape(-1)

    def tile(self, dims: Any) -> Any:
        """Repeated `dims` times along each dim, ones prepended to `dims` where it is
        shorter than the tensor's dims.

        Examples:
            >>> lm.tensor([1, 2]).tile((2,))
            tensor([1, 2, 1, 2])
        """
        dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
        return self.repeat(*((1,) * (self.ndim - len(dims)) + dims))

    def select(self, dim: int, index: int) -> Any:
        """The slice at `index` of `dim`, that dim removed (a view).

        Examples:
            >>> lm.tensor([[1, 2], [3, 4]]).select(1, 0)
            tensor([1, 3])
        """
        d = _dim(dim, self.ndim, "select")
        return self[(slice(None),) * d + (index,)]

    def tensor_split(self, indices_or_sections: Any, dim: int = 0) -> Any:
        """Pieces along `dim`: n of them as equal as can be (the first ones a row longer),
        or cut before each listed index.

        Examples:
            >>> lm.arange(5).tensor_split(2)
            (tensor([0, 1, 2]), tensor([3, 4]))
        """
        d = _dim(dim, self.ndim, "tensor_split")
        n = self.shape[d]
        if isinstance(indices_or_sections, (int, np.integer)):
            k = int(indices_or_sections)
            if k < 1:
                raise RuntimeError(f"tensor_split: sections must be at least 1; got {k}")
            sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
            cuts = np.cumsum([0, *sizes])
        else:
            inner = [min(max(int(i), 0), n) for i in indices_or_sections]
            cuts = [0, *inner, n]
        return tuple(self[(slice(None),) * d + (slice(a, max(a, b)),)]
                     for a, b in zip(cuts, cuts[1:]))

    def hsplit(self, sections: Any) -> Any:
        """tensor_split along dim 1 (dim 0 for a 1-D tensor).

        Examples:
            >>> [t.shape for t in lm.zeros(2, 4).hsplit(2)]
            [lamina.Size([2, 2]), lamina.Size([2, 2])]
        """
        return self.tensor_split(sections, 1 if self.ndim > 1 else 0)

    def vsplit(self, sections: Any) -> Any:
        """tensor_split along dim 0.

        Examples:
            >>> [t.shape for t in lm.zeros(4, 2).vsplit([1])]
            [lamina.Size([1, 2]), lamina.Size([3, 2])]
        """
        return self.tensor_split(sections, 0)

    def dsplit(self, sections: Any) -> Any:
        """tensor_split along dim 2.

        Examples:
            >>> len(lm.zeros(1, 1, 4).dsplit(2))
            2
        """
        return self.tensor_split(sections, 2)

    def split_with_sizes(self, split_sizes: Any, dim: int = 0) -> Any:
        """split(list_of_sizes, dim).

        Examples:
            >>> [t.tolist() for t in lm.arange(3).split_with_sizes([1, 2])]
            [[0], [1, 2]]
        """
        return self.split(list(split_sizes), dim)

    def take_along_dim(self, indices: Any, dim: int | None = None) -> Any:
        """Elements picked along `dim` by `indices` (broadcast with self on the other
        dims); without dim, from the flattened tensor.

        Examples:
            >>> lm.tensor([[10, 30, 20]]).take_along_dim(lm.tensor([[1, 2]]), dim=1)
            tensor([[30, 20]])
        """
        if dim is None:
            return self.reshape(-1).gather(0, indices.reshape(-1))
        from lamina.tensor_functions import broadcast_shapes

        d = _dim(dim, self.ndim, "take_along_dim")
        if indices.ndim != self.ndim:
            raise RuntimeError(f"take_along_dim: indices must have self's {self.ndim} dims; "
                               f"got {indices.ndim}")
        ones = [tuple(1 if i == d else s for i, s in enumerate(t.shape)) for t in (self, indices)]
        shape = list(broadcast_shapes(*ones))  # every dim but `dim`
        source = self.expand(*shape[:d], self.shape[d], *shape[d + 1:])
        index = indices.expand(*shape[:d], indices.shape[d], *shape[d + 1:])
        return source.gather(d, index)

    def unfold(self, dimension: int, size: int, step: int) -> Any:
        """Windows of `size` along `dimension` every `step`: that dim becomes the window
        count and a last dim of `size` is added (PyTorch's sliding view, here a gather).

        Examples:
            >>> lm.arange(5).unfold(0, 2, 2)
            tensor([[0, 1],
                    [2, 3]])
        """
        d = _dim(dimension, max(self.ndim, 1), "unfold")
        n = self.shape[d] if self.ndim else 1
        if size > n or step < 1:
            raise RuntimeError(f"unfold: size {size} must be at most dim {d}'s {n}, and "
                               f"step {step} at least 1")
        windows = (n - size) // step + 1
        index = np.arange(windows)[:, None] * step + np.arange(size)
        moved = self.movedim(d, -1) if self.ndim else self.reshape(1)
        from lamina.creation import as_tensor

        picked = moved[..., as_tensor(index)]  # (..., windows, size)
        return picked.movedim(-2, d) if self.ndim else picked

    def diff(self, n: int = 1, dim: int = -1, prepend: Any = None, append: Any = None) -> Any:
        """The n-th forward difference along `dim`, after `prepend` and `append` are put
        at its ends.

        Examples:
            >>> lm.tensor([1, 4, 9]).diff()
            tensor([3, 5])
        """
        from lamina.functions.shape import cat

        d = _dim(dim, self.ndim, "diff")
        x = cat([t for t in (prepend, self, append) if t is not None], d)
        for _ in range(n):
            length = x.shape[d] - 1
            x = x.narrow(d, 1, length) - x.narrow(d, 0, length)
        return x

    def rot90(self, k: int = 1, dims: Any = (0, 1)) -> Any:
        """Rotated by 90 degrees k times, from the first of `dims` toward the second.

        Examples:
            >>> lm.tensor([[1, 2], [3, 4]]).rot90()
            tensor([[2, 4],
                    [1, 3]])
        """
        a, b = (_dim(d, self.ndim, "rot90") for d in dims)
        if a == b:
            raise RuntimeError(f"rot90: dims must be two different dims; got {dims}")
        k %= 4
        if k == 1:
            return self.flip(b).transpose(a, b)
        if k == 2:
            return self.flip((a, b))
        if k == 3:
            return self.transpose(a, b).flip(b)
        return self.clone()

    def sum_to_size(self, *size: Any) -> Any:
        """Summed over the dims that broadcasting would stretch from `size` to this shape.

        Examples:
            >>> lm.ones(2, 3).sum_to_size(1, 3)
            tensor([[2., 2., 2.]])
        """
        size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
        lead = self.ndim - len(size)
        axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size)
                                          if s == 1 and self.shape[lead + i] != 1)
        out = self.sum(axes, keepdim=True) if axes else self
        return out.reshape(size)

    def index_copy(self, dim: int, index: Any, source: Any) -> Any:
        """A copy with the slices at `index` along `dim` replaced by source's.

        Examples:
            >>> lm.zeros(3).index_copy(0, lm.tensor([2]), lm.tensor([5.0]))
            tensor([0., 0., 5.])
        """
        return self.index_fill(dim, index, 0).index_add(dim, index, source)
