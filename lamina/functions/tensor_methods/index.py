"""Tensor methods that pick, write or mask elements by index (PyTorch's names); the ops are
in `lamina.functions.indexing`."""

from __future__ import annotations

from typing import Any


class IndexMethods:
    """gather, scatter, index_select, masked_fill, nonzero, tril, diagonal, ..."""

    __slots__ = ()

    def tril(self, diagonal: int = 0) -> Any:
        """The lower triangle of the last two dims.

        Examples:
            >>> lm.ones(2, 2).tril()
            tensor([[1., 0.],
                    [1., 1.]])
        """
        from lamina.functions.diagonals import tril

        return tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Any:
        """The upper triangle of the last two dims.

        Examples:
            >>> lm.ones(2, 2).triu(1)
            tensor([[0., 1.],
                    [0., 0.]])
        """
        from lamina.functions.diagonals import triu

        return triu(self, diagonal)

    def diag(self, diagonal: int = 0) -> Any:
        """A vector as a diagonal matrix, or a matrix's diagonal as a vector.

        Examples:
            >>> lm.tensor([1, 2]).diag()
            tensor([[1, 0],
                    [0, 2]])
        """
        from lamina.functions.diagonals import diag

        return diag(self, diagonal)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
        """The diagonal of dims (dim1, dim2), as the last dim.

        Examples:
            >>> lm.tensor([[1, 2], [3, 4]]).diagonal()
            tensor([1, 4])
        """
        from lamina.functions.diagonals import diagonal

        return diagonal(self, offset, dim1, dim2)

    def trace(self) -> Any:
        """The sum of the main diagonal of a matrix.

        Examples:
            >>> lm.tensor([[1.0, 2.0], [3.0, 4.0]]).trace()
            tensor(5.)
        """
        from lamina.functions.diagonals import trace

        return trace(self)

    def gather(self, dim: int, index: Any) -> Any:
        """Values picked along `dim` at `index`.

        Examples:
            >>> lm.tensor([[1, 2], [3, 4]]).gather(1, lm.tensor([[1], [0]]))
            tensor([[2],
                    [3]])
        """
        from lamina.functions.indexing import gather

        return gather(self, dim, index)

    def scatter(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                reduce: str | None = None) -> Any:
        """A copy with `src` (or `value`) written at `index` along `dim`.

        Examples:
            >>> lm.zeros(2, 3).scatter(1, lm.tensor([[2], [0]]), 1.0)
            tensor([[0., 0., 1.],
                    [1., 0., 0.]])
        """
        from lamina.functions.indexing import scatter

        if src is not None and not hasattr(src, "array"):
            src, value = None, src
        return scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim: int, index: Any, src: Any) -> Any:
        """A copy with `src` added at `index` along `dim`.

        Examples:
            >>> lm.zeros(3).scatter_add(0, lm.tensor([0, 0, 2]), lm.ones(3))
            tensor([2., 0., 1.])
        """
        from lamina.functions.indexing import scatter_add

        return scatter_add(self, dim, index, src)

    def index_select(self, dim: int, index: Any) -> Any:
        """The slices along `dim` at `index`.

        Examples:
            >>> lm.tensor([[1, 2], [3, 4]]).index_select(0, lm.tensor([1]))
            tensor([[3, 4]])
        """
        from lamina.functions.indexing import index_select

        return index_select(self, dim, index)

    def index_add(self, dim: int, index: Any, source: Any, *, alpha: float = 1) -> Any:
        """A copy with alpha * source added at `index` along `dim`.

        Examples:
            >>> lm.zeros(3).index_add(0, lm.tensor([0, 2]), lm.ones(2))
            tensor([1., 0., 1.])
        """
        from lamina.functions.indexing import index_add

        return index_add(self, dim, index, source, alpha=alpha)

    def index_fill(self, dim: int, index: Any, value: Any) -> Any:
        """A copy with `value` in the slices at `index` along `dim`.

        Examples:
            >>> lm.zeros(2, 3).index_fill(1, lm.tensor([1]), 5.0)
            tensor([[0., 5., 0.],
                    [0., 5., 0.]])
        """
        from lamina.functions.indexing import index_fill

        return index_fill(self, dim, index, value)

    def masked_fill(self, mask: Any, value: Any) -> Any:
        """A copy with `value` where `mask` is true.

        Examples:
            >>> x = lm.tensor([1.0, -2.0, 3.0])
            >>> x.masked_fill(x < 0, 0.0)
            tensor([1., 0., 3.])
        """
        from lamina.functions.elementwise import masked_fill

        return masked_fill(self, mask, value)

    def masked_select(self, mask: Any) -> Any:
        """The elements where `mask` is true, as a 1-D tensor.

        Examples:
            >>> x = lm.tensor([1.0, -2.0, 3.0])
            >>> x.masked_select(x > 0)
            tensor([1., 3.])
        """
        from lamina.functions.indexing import masked_select

        return masked_select(self, mask)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """Indices of the non-zero elements.

        Examples:
            >>> lm.tensor([0, 3, 0, 4]).nonzero()
            tensor([[1],
                    [3]])
        """
        from lamina.functions.indexing import nonzero

        return nonzero(self, as_tuple=as_tuple)

    def argwhere(self) -> Any:
        """The indices of the non-zero elements, one row each (`nonzero()`).

        Examples:
            >>> lm.tensor([0, 3]).argwhere()
            tensor([[1]])
        """
        return self.nonzero()
