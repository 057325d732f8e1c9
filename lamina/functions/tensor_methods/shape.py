"""Tensor methods that look at or rearrange a tensor's shape (PyTorch's names and
signatures): size, view, reshape, permute, transpose, squeeze, expand. Repeating,
cutting and flipping are in .pieces; the ops themselves are in `lamina.functions.shape`
and `.array`."""

from __future__ import annotations

from typing import Any


class ShapeMethods:
    """size, dim, numel, view, reshape, permute, transpose, squeeze, expand, ..."""

    __slots__ = ()

    def size(self, dim: int | None = None) -> Any:
        """The shape (a `lamina.Size`), or the size of one dim.

        Examples:
            >>> lm.zeros(2, 3).size(-1)
            3
        """
        if dim is None:
            return self.shape
        from lamina.functions.shape import wrap_dim

        return self.array.shape[wrap_dim(dim, self.array.ndim, "size")]

    def dim(self) -> int:
        """The number of dims.

        Examples:
            >>> lm.zeros(2, 3).dim()
            2
        """
        return self.array.ndim

    ndimension = dim

    def numel(self) -> int:
        """The number of elements.

        Examples:
            >>> lm.zeros(2, 3).numel()
            6
        """
        return self.array.size

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element.

        Examples:
            >>> lm.zeros(2).element_size()
            4
        """
        return self.array.itemsize

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the memory is in row-major order (or in `memory_format`'s order:
        channels last for `lm.channels_last`).

        Examples:
            >>> x = lm.zeros(2, 3)
            >>> x.is_contiguous(), x.t().is_contiguous()
            (True, False)
        """
        from lamina.memory_formats import is_laid_out

        return is_laid_out(self.array, memory_format)

    def contiguous(self, memory_format: Any = None) -> Any:
        """Self when row-major already, else a row-major copy; with `memory_format`
        `lm.channels_last` (`channels_last_3d`), laid out with the channels innermost.

        Examples:
            >>> x = lm.zeros(2, 3).t()
            >>> x.contiguous().is_contiguous()
            True
            >>> lm.zeros(1, 3, 2, 2).contiguous(memory_format=lm.channels_last).stride()
            (12, 1, 6, 3)
        """
        from lamina.functions.shape import contiguous
        from lamina.memory_formats import is_laid_out, order, preserve_format, relaid

        if memory_format is preserve_format and not self.array.flags.c_contiguous:
            raise RuntimeError("preserve memory format is unsupported by the contiguous "
                               "operator")
        dims = order(memory_format, self.ndim, "contiguous")
        if dims is None:
            return contiguous(self)
        return self if is_laid_out(self.array, memory_format) else relaid(self, dims, contiguous)

    def view(self, *shape: Any) -> Any:
        """The same memory with another shape (-1 infers one size); never copies.

        Examples:
            >>> lm.arange(6).view(2, -1)
            tensor([[0, 1, 2],
                    [3, 4, 5]])
        """
        from lamina.functions.shape import view

        return view(self, *shape)

    def view_as(self, other: Any) -> Any:
        """`view(other.shape)`.

        Examples:
            >>> lm.arange(6).view_as(lm.zeros(3, 2)).shape
            lamina.Size([3, 2])
        """
        return self.view(tuple(other.shape))

    def reshape(self, *shape: Any) -> Any:
        """The same values with another shape: a view where the memory allows, else a copy.

        Examples:
            >>> lm.arange(6).reshape(3, 2)
            tensor([[0, 1],
                    [2, 3],
                    [4, 5]])
        """
        from lamina.functions.array import reshape
        from lamina.functions.shape import share_version, sizes_arg

        return share_version(reshape(self, sizes_arg(shape)), self)

    def reshape_as(self, other: Any) -> Any:
        """`reshape(other.shape)`.

        Examples:
            >>> lm.arange(4).reshape_as(lm.zeros(2, 2)).shape
            lamina.Size([2, 2])
        """
        return self.reshape(tuple(other.shape))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:
        """Dims start_dim..end_dim merged into one.

        Examples:
            >>> lm.zeros(2, 3, 4).flatten(1).shape
            lamina.Size([2, 12])
        """
        from lamina.functions.array import flatten

        return flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Any) -> Any:
        """Dim `dim` split into `sizes`.

        Examples:
            >>> lm.zeros(2, 6).unflatten(1, (2, 3)).shape
            lamina.Size([2, 2, 3])
        """
        from lamina.functions.shape import unflatten

        return unflatten(self, dim, sizes)

    def permute(self, *dims: Any) -> Any:
        """Dims reordered: `x.permute(2, 0, 1)`.

        Examples:
            >>> lm.zeros(2, 3, 4).permute(2, 0, 1).shape
            lamina.Size([4, 2, 3])
        """
        from lamina.functions.shape import permute

        return permute(self, *dims)

    def transpose(self, dim0: int, dim1: int) -> Any:
        """Dims dim0 and dim1 swapped (PyTorch's transpose; use `permute` to reorder all).

        Examples:
            >>> x = lm.tensor([[1, 2, 3]])
            >>> x.transpose(0, 1)
            tensor([[1],
                    [2],
                    [3]])
        """
        from lamina.functions.shape import swap_dims

        return swap_dims(self, dim0, dim1)

    swapaxes = swapdims = transpose

    def t(self) -> Any:
        """The transpose of a matrix (tensors of at most 2 dims).

        Examples:
            >>> lm.tensor([[1, 2, 3]]).t().shape
            lamina.Size([3, 1])
        """
        from lamina.functions.shape import t

        return t(self)

    @property
    def T(self) -> Any:  # noqa: N802 - PyTorch's name
        """All dims reversed.

        Examples:
            >>> lm.zeros(2, 3, 4).T.shape
            lamina.Size([4, 3, 2])
        """
        return self.permute(*reversed(range(self.array.ndim)))

    @property
    def mT(self) -> Any:  # noqa: N802
        """The last two dims swapped (a batch of matrices transposed).

        Examples:
            >>> lm.zeros(5, 2, 3).mT.shape
            lamina.Size([5, 3, 2])
        """
        return self.transpose(-2, -1)

    def movedim(self, source: Any, destination: Any) -> Any:
        """Dims moved from `source` to `destination`.

        Examples:
            >>> lm.zeros(2, 3, 4).movedim(0, -1).shape
            lamina.Size([3, 4, 2])
        """
        from lamina.functions.shape import movedim

        return movedim(self, source, destination)

    moveaxis = movedim

    def squeeze(self, dim: Any = None) -> Any:
        """Size-1 dims removed (only `dim`, an int or tuple, when given).

        Examples:
            >>> lm.zeros(2, 1, 3).squeeze().shape
            lamina.Size([2, 3])
        """
        from lamina.functions.shape import squeeze

        return squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Any:
        """A size-1 dim inserted at `dim`.

        Examples:
            >>> lm.zeros(3).unsqueeze(0).shape
            lamina.Size([1, 3])
        """
        from lamina.functions.shape import unsqueeze

        return unsqueeze(self, dim)

    def expand(self, *sizes: Any) -> Any:
        """Broadcast to `sizes` (-1 keeps a dim) without copying.

        Examples:
            >>> lm.tensor([[1], [2]]).expand(2, 3)
            tensor([[1, 1, 1],
                    [2, 2, 2]])
        """
        from lamina.functions.shape import expand

        return expand(self, *sizes)

    def expand_as(self, other: Any) -> Any:
        """`expand(other.shape)`.

        Examples:
            >>> lm.tensor([1, 2]).expand_as(lm.zeros(3, 2)).shape
            lamina.Size([3, 2])
        """
        return self.expand(tuple(other.shape))

    def broadcast_to(self, size: Any) -> Any:
        """`expand(size)`.

        Examples:
            >>> lm.tensor([1, 2]).broadcast_to((2, 2))
            tensor([[1, 2],
                    [1, 2]])
        """
        return self.expand(tuple(size))
