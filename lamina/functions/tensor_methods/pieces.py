"""Tensor methods that repeat a tensor, cut it into pieces or reorder it along dims:
repeat, repeat_interleave, narrow, chunk, split, unbind, flip and roll (PyTorch's names
and signatures; the ops are in `lamina.functions.shape` and `.array`)."""

from __future__ import annotations

from typing import Any


class PieceMethods:
    """repeat, repeat_interleave, narrow, chunk, split, unbind, flip, roll."""

    __slots__ = ()

    def repeat(self, *sizes: Any) -> Any:
        """Tiled `sizes` times along each dim.

        Examples:
            >>> lm.tensor([1, 2]).repeat(2)
            tensor([1, 2, 1, 2])
        """
        from lamina.functions.pieces import repeat

        return repeat(self, *sizes)

    def repeat_interleave(self, repeats: Any, dim: int | None = None, *,
                          output_size: int | None = None) -> Any:
        """Each element repeated `repeats` times in place order.

        Examples:
            >>> lm.tensor([1, 2]).repeat_interleave(2)
            tensor([1, 1, 2, 2])
        """
        from lamina.functions.pieces import repeat_interleave

        return repeat_interleave(self, repeats, dim)

    def narrow(self, dim: int, start: int, length: int) -> Any:
        """The slice start:start+length of `dim`.

        Examples:
            >>> lm.arange(5).narrow(0, 1, 3)
            tensor([1, 2, 3])
        """
        from lamina.functions.pieces import narrow

        return narrow(self, dim, start, length)

    def chunk(self, chunks: int, dim: int = 0) -> Any:
        """`chunks` pieces of equal size (the last may be smaller).

        Examples:
            >>> lm.arange(5).chunk(2)
            (tensor([0, 1, 2]), tensor([3, 4]))
        """
        from lamina.functions.pieces import chunk

        return chunk(self, chunks, dim)

    def split(self, split_size: Any, dim: int = 0) -> Any:
        """Pieces of `split_size` (or of each listed size) along `dim`.

        Examples:
            >>> lm.arange(5).split([2, 3])
            (tensor([0, 1]), tensor([2, 3, 4]))
        """
        from lamina.functions.pieces import split_

        return split_(self, split_size, dim)

    def unbind(self, dim: int = 0) -> Any:
        """The slices along `dim`, that dim removed.

        Examples:
            >>> lm.tensor([[1, 2], [3, 4]]).unbind(1)
            (tensor([1, 3]), tensor([2, 4]))
        """
        from lamina.functions.array import unbind
        from lamina.functions.shape import share_version, wrap_dim

        return tuple(share_version(p, self)
                     for p in unbind(self, wrap_dim(dim, self.array.ndim, "unbind")))

    def flip(self, *dims: Any) -> Any:
        """Elements reversed along `dims`.

        Examples:
            >>> lm.tensor([1, 2, 3]).flip(0)
            tensor([3, 2, 1])
        """
        from lamina.functions.pieces import flip

        return flip(self, *dims)

    def fliplr(self) -> Any:
        """Columns in reverse order (`flip(1)`).

        Examples:
            >>> lm.tensor([[1, 2]]).fliplr()
            tensor([[2, 1]])
        """
        return self.flip(1)

    def flipud(self) -> Any:
        """Rows in reverse order (`flip(0)`).

        Examples:
            >>> lm.tensor([[1], [2]]).flipud()
            tensor([[2],
                    [1]])
        """
        return self.flip(0)

    def roll(self, shifts: Any, dims: Any = None) -> Any:
        """Elements shifted along `dims`, wrapping around.

        Examples:
            >>> lm.tensor([[1, 2]]).fliplr()
            tensor([[2, 1]])

        Examples:
            >>> lm.tensor([[1], [2]]).flipud()
            tensor([[2],
                    [1]])

        Examples:
            >>> lm.tensor([1, 2, 3]).roll(1)
            tensor([3, 1, 2])
        """
        from lamina.functions.pieces import roll

        return roll(self, shifts, dims)
