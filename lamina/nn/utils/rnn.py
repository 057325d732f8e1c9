"""`torch.nn.utils.rnn`: sequences of different lengths padded into one batch, or packed so
a recurrent layer stops each one at its own length.

A PackedSequence holds the valid steps only, time-major: step t of every sequence still
running at t, longest sequences first (`batch_sizes[t]` of them). Packing and padding are
indexing, so gradients flow through both.

Examples:
    >>> from lamina.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    >>> lstm = nn.LSTM(3, 4, batch_first=True)
    >>> packed = pack_padded_sequence(lm.zeros(2, 5, 3), [5, 2], batch_first=True)
    >>> out, (h, c) = lstm(packed)
    >>> padded, lengths = pad_packed_sequence(out, batch_first=True)
    >>> padded.shape, lengths.tolist()
    (lamina.Size([2, 5, 4]), [5, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import lamina.functions as F
from lamina.autograd.tensor import Tensor


class PackedSequence(NamedTuple):
    """PyTorch's fields: `data` (sum of lengths, *), `batch_sizes` (T,) int64, and the
    permutation that sorted the batch by length (`sorted_indices`) and its inverse
    (`unsorted_indices`), None when the batch came sorted."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def lengths(self) -> np.ndarray:
        """Each sequence's length, in sorted order (longest first)."""
        sizes = self.batch_sizes.numpy()
        return (sizes[None, :] > np.arange(sizes[0])[:, None]).sum(axis=1)


def _rows(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (time, batch) positions of a packed sequence's rows, for lengths sorted
    longest first: time-major, as PackedSequence stores them."""
    steps = int(lengths[0]) if len(lengths) else 0
    valid = np.arange(steps)[:, None] < lengths[None, :]
    return np.nonzero(valid)


def _lengths(lengths: Any) -> np.ndarray:
    lengths = np.asarray(getattr(lengths, "array", lengths)).astype(np.int64).reshape(-1)
    if len(lengths) and lengths.min() < 1:
        raise RuntimeError(f"pack_padded_sequence: every length must be >= 1; got "
                           f"{lengths.tolist()}")
    return lengths


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) whose sequence b is
    `lengths[b]` long. With `enforce_sorted`, lengths must be decreasing (as PyTorch's);
    otherwise the batch is sorted here and the permutation kept."""
    lengths = _lengths(lengths)
    x = input.transpose(0, 1) if batch_first else input
    if len(lengths) != x.shape[1] or (len(lengths) and lengths.max() > x.shape[0]):
        raise ValueError(f"pack_padded_sequence: expected {x.shape[1]} lengths of at most "
                         f"{x.shape[0]} for input {tuple(input.shape)} (batch_first="
                         f"{batch_first}); got {lengths.tolist()}")
    order: np.ndarray | None = None
    if enforce_sorted:
        if np.any(np.diff(lengths) > 0):
            raise RuntimeError("pack_padded_sequence: `lengths` array must be sorted in "
                               "decreasing order when `enforce_sorted` is True; sort the "
                               "batch, or pass enforce_sorted=False")
    else:
        order = np.argsort(-lengths, kind="stable")
        lengths = lengths[order]
        x = x[:, order]
    time, batch = _rows(lengths)
    sizes = np.bincount(time, minlength=int(lengths[0])).astype(np.int64)
    return PackedSequence(x[time, batch], Tensor(sizes), *_permutation(order))


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes `permutation` (None stays None).

    Examples:
        >>> nn.utils.rnn.invert_permutation(lm.tensor([2, 0, 1]))
        tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    return Tensor(np.argsort(permutation.numpy()).astype(np.int64))


def _permutation(order: np.ndarray | None) -> tuple[Tensor | None, Tensor | None]:
    if order is None:
        return None, None
    return Tensor(order.astype(np.int64)), Tensor(np.argsort(order).astype(np.int64))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0, total_length: int | None = None
                        ) -> tuple[Tensor, Tensor]:
    """The padded batch (T, B, *) (or (B, T, *)) in the original order, and the lengths
    (B,) int64: the inverse of pack_padded_sequence."""
    steps = len(sequence.batch_sizes)
    if total_length is not None and total_length < steps:
        raise ValueError(f"pad_packed_sequence: total_length ({total_length}) is less than "
                         f"the longest sequence ({steps})")
    padded, lengths = padded_sorted(sequence, padding_value, total_length or steps)
    if sequence.unsorted_indices is not None:
        restore = sequence.unsorted_indices.numpy()
        padded, lengths = padded[:, restore], lengths[restore]
    return (padded.transpose(0, 1) if batch_first else padded), Tensor(lengths.astype(np.int64))


def padded_sorted(sequence: PackedSequence, padding_value: float = 0.0,
                  steps: int | None = None) -> tuple[Tensor, np.ndarray]:
    """The packed batch as (steps, B, *) in its sorted order, and its lengths."""
    lengths = sequence.lengths()
    time, batch = _rows(lengths)
    data = sequence.data
    # Every padded position reads the extra last row, which holds padding_value.
    index = np.full((steps or len(sequence.batch_sizes), len(lengths)), data.shape[0], np.int64)
    index[time, batch] = np.arange(len(time))
    filler = Tensor(np.full((1, *data.shape[1:]), padding_value, data.dtype))
    return F.concat([data, filler], 0)[index], lengths


def packed_like(x: Tensor, sequence: PackedSequence) -> PackedSequence:
    """Time-major x (T, B, *), in `sequence`'s sorted order, packed as `sequence` is."""
    time, batch = _rows(sequence.lengths())
    return PackedSequence(x[time, batch], sequence.batch_sizes, sequence.sorted_indices,
                          sequence.unsorted_indices)


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences (L_i, *) of different lengths into (T, B, *) (or (B, T, *)),
    padded with `padding_value` on the right (or the left)."""
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence: padding_side must be 'right' or 'left'; got "
                         f"{padding_side!r}")
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        fill = Tensor(np.full((longest - s.shape[0], *s.shape[1:]), padding_value, s.dtype))
        rows.append(F.concat([s, fill] if padding_side == "right" else [fill, s], 0))
    return F.stack(rows, 0 if batch_first else 1)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *): pad_sequence, then pack_padded_sequence."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False
                   ) -> list[Tensor]:
    """The list of sequences a padded batch holds, each cut to its length."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[b, :int(n)] for b, n in enumerate(_lengths(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in the original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
