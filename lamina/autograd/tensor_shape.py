"""Tensor methods that look at or rearrange a tensor's shape (PyTorch's names and
signatures); the ops themselves are in `lamina.functions.shape` and `.array`."""

from __future__ import annotations

from typing import Any


class ShapeMethods:
    """size, dim, numel, view, reshape, permute, transpose, squeeze, expand, split, ..."""

    __slots__ = ()

    def size(self, dim: int | None = None) -> Any:
        """The shape (a `lamina.Size`), or the size of one dim.

        Example:
            >>> lm.zeros(2, 3).size(-1)
            3
        """
        if dim is None:
            return self.shape
        from lamina.functions.shape import wrap_dim

        return self.array.shape[wrap_dim(dim, self.array.ndim, "size")]

    def dim(self) -> int:
        """The number of dims."""
        return self.array.ndim

    ndimension = dim

    def numel(self) -> int:
        """The number of elements."""
        return self.array.size

    nelement = numel

    def element_size(self) -> int:
        """Bytes per element."""
        return self.array.itemsize

    def is_contiguous(self, memory_format: Any = None) -> bool:
        """Whether the memory is in row-major order."""
        return bool(self.array.flags.c_contiguous)

    def contiguous(self, memory_format: Any = None) -> Any:
        """Self when row-major already, else a row-major copy."""
        from lamina.functions.shape import contiguous

        return contiguous(self)

    def view(self, *shape: Any) -> Any:
        """The same memory with another shape (-1 infers one size); never copies."""
        from lamina.functions.shape import view

        return view(self, *shape)

    def view_as(self, other: Any) -> Any:
        """`view(other.shape)`."""
        return self.view(tuple(other.shape))

    def reshape(self, *shape: Any) -> Any:
        """The same values with another shape: a view where the memory allows, else a copy."""
        from lamina.functions.array import reshape
        from lamina.functions.shape import share_version, sizes_arg

        return share_version(reshape(self, sizes_arg(shape)), self)

    def reshape_as(self, other: Any) -> Any:
        """`reshape(other.shape)`."""
        return self.reshape(tuple(other.shape))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:
        """Dims start_dim..end_dim merged into one."""
        from lamina.functions.array import flatten

        return flatten(self, start_dim, end_dim)

    def unflatten(self, dim: int, sizes: Any) -> Any:
        """Dim `dim` split into `sizes`."""
        from lamina.functions.shape import unflatten

        return unflatten(self, dim, sizes)

    def permute(self, *dims: Any) -> Any:
        """Dims reordered: `x.permute(2, 0, 1)`."""
        from lamina.functions.shape import permute

        return permute(self, *dims)

    def transpose(self, dim0: int, dim1: int) -> Any:
        """Dims dim0 and dim1 swapped (PyTorch's transpose; use `permute` to reorder all)."""
        from lamina.functions.shape import swap_dims

        return swap_dims(self, dim0, dim1)

    swapaxes = swapdims = transpose

    def t(self) -> Any:
        """The transpose of a matrix (tensors of at most 2 dims)."""
        from lamina.functions.shape import t

        return t(self)

    @property
    def T(self) -> Any:  # noqa: N802 - PyTorch's name
        """All dims reversed."""
        return self.permute(*reversed(range(self.array.ndim)))

    @property
    def mT(self) -> Any:  # noqa: N802
        """The last two dims swapped (a batch of matrices transposed)."""
        return self.transpose(-2, -1)

    def movedim(self, source: Any, destination: Any) -> Any:
        """Dims moved from `source` to `destination`."""
        from lamina.functions.shape import movedim

        return movedim(self, source, destination)

    moveaxis = movedim

    def squeeze(self, dim: Any = None) -> Any:
        """Size-1 dims removed (only `dim`, an int or tuple, when given)."""
        from lamina.functions.shape import squeeze

        return squeeze(self, dim)

    def unsqueeze(self, dim: int) -> Any:
        """A size-1 dim inserted at `dim`."""
        from lamina.functions.shape import unsqueeze

        return unsqueeze(self, dim)

    def expand(self, *sizes: Any) -> Any:
        """Broadcast to `sizes` (-1 keeps a dim) without copying."""
        from lamina.functions.shape import expand

        return expand(self, *sizes)

    def expand_as(self, other: Any) -> Any:
        """`expand(other.shape)`."""
        return self.expand(tuple(other.shape))

    def broadcast_to(self, size: Any) -> Any:
        """`expand(size)`."""
        return self.expand(tuple(size))

    def repeat(self, *sizes: Any) -> Any:
        """Tiled `sizes` times along each dim."""
        from lamina.functions.shape import repeat

        return repeat(self, *sizes)

    def repeat_interleave(self, repeats: Any, dim: int | None = None, *,
                          output_size: int | None = None) -> Any:
        """Each element repeated `repeats` times in place order."""
        from lamina.functions.shape import repeat_interleave

        return repeat_interleave(self, repeats, dim)

    def narrow(self, dim: int, start: int, length: int) -> Any:
        """The slice start:start+length of `dim`."""
        from lamina.functions.shape import narrow

        return narrow(self, dim, start, length)

    def chunk(self, chunks: int, dim: int = 0) -> Any:
        """`chunks` pieces of equal size (the last may be smaller)."""
        from lamina.functions.shape import chunk

        return chunk(self, chunks, dim)

    def split(self, split_size: Any, dim: int = 0) -> Any:
        """Pieces of `split_size` (or of each listed size) along `dim`."""
        from lamina.functions.shape import split_

        return split_(self, split_size, dim)

    def unbind(self, dim: int = 0) -> Any:
        """The slices along `dim`, that dim removed."""
        from lamina.functions.array import unbind
        from lamina.functions.shape import share_version, wrap_dim

        return tuple(share_version(p, self)
                     for p in unbind(self, wrap_dim(dim, self.array.ndim, "unbind")))

    def flip(self, *dims: Any) -> Any:
        """Elements reversed along `dims`."""
        from lamina.functions.shape import flip

        return flip(self, *dims)

    def fliplr(self) -> Any:
        return self.flip(1)

    def flipud(self) -> Any:
        return self.flip(0)

    def roll(self, shifts: Any, dims: Any = None) -> Any:
        """Elements shifted along `dims`, wrapping around."""
        from lamina.functions.shape import roll

        return roll(self, shifts, dims)

    def tril(self, diagonal: int = 0) -> Any:
        """The lower triangle of the last two dims."""
        from lamina.functions.indexing import tril

        return tril(self, diagonal)

    def triu(self, diagonal: int = 0) -> Any:
        """The upper triangle of the last two dims."""
        from lamina.functions.indexing import triu

        return triu(self, diagonal)

    def diag(self, diagonal: int = 0) -> Any:
        """A vector as a diagonal matrix, or a matrix's diagonal as a vector."""
        from lamina.functions.indexing import diag

        return diag(self, diagonal)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
        """The diagonal of dims (dim1, dim2), as the last dim."""
        from lamina.functions.indexing import diagonal

        return diagonal(self, offset, dim1, dim2)

    def trace(self) -> Any:
        """The sum of the main diagonal of a matrix."""
        from lamina.functions.indexing import trace

        return trace(self)

    def gather(self, dim: int, index: Any) -> Any:
        """Values picked along `dim` at `index`."""
        from lamina.functions.indexing import gather

        return gather(self, dim, index)

    def scatter(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                reduce: str | None = None) -> Any:
        """A copy with `src` (or `value`) written at `index` along `dim`."""
        from lamina.functions.indexing import scatter

        if src is not None and not hasattr(src, "array"):
            src, value = None, src
        return scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim: int, index: Any, src: Any) -> Any:
        """A copy with `src` added at `index` along `dim`."""
        from lamina.functions.indexing import scatter_add

        return scatter_add(self, dim, index, src)

    def index_select(self, dim: int, index: Any) -> Any:
        """The slices along `dim` at `index`."""
        from lamina.functions.indexing import index_select

        return index_select(self, dim, index)

    def index_add(self, dim: int, index: Any, source: Any, *, alpha: float = 1) -> Any:
        """A copy with alpha * source added at `index` along `dim`."""
        from lamina.functions.indexing import index_add

        return index_add(self, dim, index, source, alpha=alpha)

    def index_fill(self, dim: int, index: Any, value: Any) -> Any:
        """A copy with `value` in the slices at `index` along `dim`."""
        from lamina.functions.indexing import index_fill

        return index_fill(self, dim, index, value)

    def masked_fill(self, mask: Any, value: Any) -> Any:
        """A copy with `value` where `mask` is true."""
        from lamina.functions.elementwise import masked_fill

        return masked_fill(self, mask, value)

    def masked_select(self, mask: Any) -> Any:
        """The elements where `mask` is true, as a 1-D tensor."""
        from lamina.functions.indexing import masked_select

        return masked_select(self, mask)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """Indices of the non-zero elements."""
        from lamina.functions.indexing import nonzero

        return nonzero(self, as_tuple=as_tuple)

    def argwhere(self) -> Any:
        return self.nonzero()
