"""PyTorch's memory formats (`torch.memory_format`): the order a dense tensor's dimensions
lie in memory. lamina's ops take any order (NumPy's strides) and give the same values in
each; these say which order `contiguous`, `clone` and `to` lay a copy out in, and which
`is_contiguous` checks."""

from __future__ import annotations

from typing import Any


class memory_format:  # noqa: N801 - PyTorch's name
    """A memory format, printed as PyTorch prints its own.

    Examples:
        >>> lm.channels_last, isinstance(lm.preserve_format, lm.memory_format)
        (lamina.channels_last, True)
    """

    def __init__(self, name: str, rank: int | None = None) -> None:
        self.name, self.rank = name, rank

    def __repr__(self) -> str:
        return f"lamina.{self.name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last", 4)  # NCHW with C innermost
channels_last_3d = memory_format("channels_last_3d", 5)  # NCDHW with C innermost


def order(fmt: Any, ndim: int, op: str) -> list[int] | None:
    """The dimensions from outermost to innermost in memory for `fmt` (None: row-major,
    contiguous_format's and preserve_format's order for `contiguous`)."""
    if fmt is None or fmt is contiguous_format or fmt is preserve_format:
        return None
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}: memory_format must be a lamina.memory_format "
                        f"(lamina.channels_last, ...); got {fmt!r}")
    if ndim != fmt.rank:
        raise RuntimeError(f"required rank {fmt.rank} tensor to use {fmt.name} format")
    return [0, *range(2, ndim), 1]


def relaid(t: Any, dims: list[int], copy: Any) -> Any:
    """t's values with its memory in `dims`' order (see order): `copy`, which makes a
    row-major tensor of its argument, applied to t viewed in that order, viewed back."""
    back = sorted(range(len(dims)), key=dims.__getitem__)
    return copy(t.permute(*dims)).permute(*back)


def is_laid_out(array: Any, fmt: Any) -> bool:
    """Whether `array` is dense in `fmt`'s order (a wrong rank is not)."""
    if isinstance(fmt, memory_format) and fmt.rank is not None:
        if array.ndim != fmt.rank:
            return False
        return bool(array.transpose(order(fmt, array.ndim, "is_contiguous")).flags.c_contiguous)
    return bool(array.flags.c_contiguous)
