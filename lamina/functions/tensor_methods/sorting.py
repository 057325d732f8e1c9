"""Tensor methods that return indices: argmax, argmin, sort, argsort, topk, kthvalue,
median and mode (PyTorch's names and signatures; the ops are in
`lamina.functions.sorting`)."""

from __future__ import annotations

from typing import Any


class SortingMethods:
    """argmax, argmin, sort, argsort, topk, kthvalue, median, mode."""

    __slots__ = ()

    def argmax(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """Index of the largest value (first of ties).

        Examples:
            >>> lm.tensor([[1, 5], [7, 2]]).argmax(dim=1)
            tensor([1, 0])
        """
        from lamina.functions.sorting import argmax

        return argmax(self, dim, keepdim)

    def argmin(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """Index of the smallest value (first of ties).

        Examples:
            >>> lm.tensor([3, 1, 2]).argmin()
            tensor(1)
        """
        from lamina.functions.sorting import argmin

        return argmin(self, dim, keepdim)

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        """(values, indices) sorted along `dim`.

        Examples:
            >>> lm.tensor([3, 1, 2]).sort()
            lamina.return_types.sort(
            values=tensor([1, 2, 3]),
            indices=tensor([1, 2, 0]))
        """
        from lamina.functions.sorting import sort

        return sort(self, dim, descending, stable)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        """The indices that sort along `dim`.

        Examples:
            >>> lm.tensor([3, 1, 2]).argsort(descending=True)
            tensor([0, 2, 1])
        """
        from lamina.functions.sorting import argsort

        return argsort(self, dim, descending, stable)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        """(values, indices) of the k largest (or smallest) along `dim`.

        Examples:
            >>> lm.tensor([3, 1, 2]).topk(2)
            lamina.return_types.topk(
            values=tensor([3, 2]),
            indices=tensor([0, 2]))
        """
        from lamina.functions.sorting import topk

        return topk(self, k, dim, largest, sorted)

    def kthvalue(self, k: int, dim: int = -1, keepdim: bool = False) -> Any:
        """(values, indices) of the k-th smallest along `dim`.

        Examples:
            >>> lm.tensor([3, 1, 2]).kthvalue(2)
            lamina.return_types.kthvalue(
            values=tensor(2),
            indices=tensor(2))
        """
        from lamina.functions.sorting import kthvalue

        return kthvalue(self, k, dim, keepdim)

    def median(self, dim: int | None = None, keepdim: bool = False) -> Any:
        """The lower median; along a dim, (values, indices).

        Examples:
            >>> lm.tensor([3.0, 1.0, 2.0, 4.0]).median()
            tensor(2.)
        """
        from lamina.functions.sorting import median

        return median(self, dim, keepdim)

    def mode(self, dim: int = -1, keepdim: bool = False) -> Any:
        """(values, indices) of the most frequent value along `dim`.

        Examples:
            >>> lm.tensor([1, 2, 2, 3]).mode()
            lamina.return_types.mode(
            values=tensor(2),
            indices=tensor(2))
        """
        from lamina.functions.sorting import mode

        return mode(self, dim, keepdim)
