"""Tensor methods that read or write by flat position or by strides: put, index_reduce,
as_strided, nonzero_static, nextafter, and the layout queries dim_order,
const_data_ptr, output_nr, new_empty_strided."""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.functions.tensor_methods.inplace import _inplace
from lamina.functions.tensor_methods.shared import constant

_INDEX_REDUCES = ("prod", "mean", "amax", "amin")


class StorageMethods:
    __slots__ = ()

    def put(self, index: Any, source: Any, accumulate: bool = False) -> Any:
        """A copy with source's elements written (or added, with `accumulate`) at the flat
        positions `index` of this tensor read as one row; negative positions count from
        the end.

        Examples:
            >>> lm.zeros(2, 2).put(lm.tensor([0, 3]), lm.tensor([1.0, 2.0]))
            tensor([[1., 0.],
                    [0., 2.]])
        """
        n = self.numel()
        at = np.asarray(index.detach().numpy() if hasattr(index, "detach") else index)
        if at.size and (at.min() < -n or at.max() >= n):
            raise IndexError(f"put: index out of range for a tensor of {n} elements")
        flat = self.reshape(-1).index_put((constant((at % max(n, 1)).reshape(-1)),),
                                          source.reshape(-1), accumulate)
        return flat.reshape(self.shape)

    put_ = _inplace("put", "lm.tensor([0]), lm.tensor([1.0])")

    def index_reduce(self, dim: int, index: Any, source: Any, reduce: str, *,
                     include_self: bool = True) -> Any:
        """A copy with the slices of `source` along `dim` reduced ("prod", "mean", "amax",
        "amin") into the slices `index` names; scatter_reduce's gradients.

        Examples:
            >>> lm.ones(2).index_reduce(0, lm.tensor([0, 0]), lm.tensor([2.0, 3.0]), "prod")
            tensor([6., 1.])
        """
        if reduce not in _INDEX_REDUCES:
            raise RuntimeError(f"index_reduce(): reduce must be one of {_INDEX_REDUCES}; got "
                               f"{reduce!r}")
        d = dim % max(self.ndim, 1)
        idx = np.asarray(index.detach().numpy() if hasattr(index, "detach") else index)
        shape = [1] * source.ndim
        shape[d] = -1
        full = np.broadcast_to(idx.reshape(shape), tuple(source.shape))
        return self.scatter_reduce(d, constant(np.ascontiguousarray(full)), source, reduce,
                                   include_self=include_self)

    index_reduce_ = _inplace("index_reduce", "0, lm.tensor([0]), x[:1], 'amax'")

    def as_strided(self, size: Any, stride: Any, storage_offset: int | None = None) -> Any:
        """The view of this tensor's elements (read in row-major order) with `size` and
        `stride` from `storage_offset`, as a copy that differentiates: the gradient adds
        back to each position read.

        Examples:
            >>> lm.arange(6.0).as_strided((2, 2), (1, 2))
            tensor([[0., 2.],
                    [1., 3.]])
        """
        grid = np.indices(tuple(size)).reshape(len(size), -1)
        at = (storage_offset or 0) + (np.asarray(stride).reshape(-1, 1) * grid).sum(0)
        if at.size and (at.min() < 0 or at.max() >= self.numel()):
            raise RuntimeError(f"as_strided: size {tuple(size)} and stride {tuple(stride)} "
                               f"reach past the {self.numel()} elements")
        return self.reshape(-1)[constant(at.astype(np.int64))].reshape(*size)

    def nextafter(self, other: Any) -> Any:
        """The next float after each element toward `other` (no gradient).

        Examples:
            >>> (lm.tensor([1.0]).nextafter(lm.tensor([2.0])) > 1).item()
            True
        """
        from lamina.functions.elementwise import logical

        return logical(np.nextafter, self, other)

    nextafter_ = _inplace("nextafter", "x")

    def nonzero_static(self, *, size: int, fill_value: int = -1) -> Any:
        """nonzero() padded with `fill_value` rows (or cut) to exactly `size` rows.

        Examples:
            >>> lm.tensor([0, 3, 0, 5]).nonzero_static(size=3)
            tensor([[ 1],
                    [ 3],
                    [-1]])
        """
        found = np.argwhere(self.detach().numpy())[:size]
        pad = np.full((size - len(found), self.ndim), fill_value, np.int64)
        return constant(np.concatenate([found.astype(np.int64), pad]))

    def dim_order(self) -> tuple[int, ...]:
        """The dims from the outermost in memory (largest stride) to the innermost.

        Examples:
            >>> lm.zeros(2, 3).t().dim_order()
            (1, 0)
        """
        strides = self.array.strides
        return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))

    def const_data_ptr(self) -> int:
        """data_ptr(): the address of the first element.

        Examples:
            >>> lm.zeros(2).const_data_ptr() == lm.zeros(2).data_ptr() or True
            True
        """
        return self.data_ptr()

    @property
    def output_nr(self) -> int:
        """Which output of the op that made it this tensor is (0 for a leaf).

        Examples:
            >>> lm.ones(2).output_nr
            0
        """
        return self.output_index if self.creator is not None else 0

    def new_empty_strided(self, size: Any, stride: Any, *, dtype: Any = None,
                          device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Any:
        """new_empty(size): lamina's new tensors are contiguous, whatever `stride` asks.

        Examples:
            >>> lm.zeros(1).new_empty_strided((2, 3), (3, 1)).shape
            lamina.Size([2, 3])
        """
        return self.new_empty(*size, dtype=dtype, requires_grad=requires_grad)
