"""Datasets (indexable collections of samples) and the DataLoader that batches them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor


class Dataset:
    """Base class: `__len__` and `__getitem__(i)` returning one sample (a tuple of arrays).

    A subclass may also define `get_batch(indices)` returning the stacked samples at once,
    which DataLoader prefers to collating one sample at a time.
    """

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError


class ArrayDataset(Dataset):
    """Samples are rows of equally long arrays: ArrayDataset(x, y)[i] == (x[i], y[i]).

    Example:
        >>> ds = ArrayDataset(np.zeros((100, 40), np.float32), np.zeros(100, np.int64))
        >>> x, y = ds[0]
    """

    def __init__(self, *arrays: Any) -> None:
        if not arrays:
            raise ValueError("ArrayDataset: needs at least one array")
        self.arrays = tuple(np.asarray(a) for a in arrays)
        lengths = {len(a) for a in self.arrays}
        if len(lengths) != 1:
            raise ValueError(f"ArrayDataset: arrays must have one length; got "
                             f"{[len(a) for a in self.arrays]}")

    def __len__(self) -> int:
        return len(self.arrays[0])

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        return tuple(a[index] for a in self.arrays)

    def get_batch(self, indices: np.ndarray) -> tuple[Any, ...]:
        """The samples at `indices`, stacked: one fancy-index per array."""
        return tuple(a[indices] for a in self.arrays)


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order. It has `get_batch` when the
    dataset has one, so a DataLoader still reads a batch in one call.

    Example:
        >>> Subset(ArrayDataset(x, y), [4, 0])[1]  # (x[0], y[0])
    """

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, np.asarray(indices, dtype=np.int64)
        if hasattr(dataset, "get_batch"):
            self.get_batch = self._get_batch

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[int(self.indices[index])]

    def _get_batch(self, indices: np.ndarray) -> tuple[Any, ...]:
        return self.dataset.get_batch(self.indices[indices])


def random_split(dataset: Any, fractions: Sequence[float], seed: int = 0) -> list[Subset]:
    """Cut `dataset` into disjoint random parts of the given shares (summing to 1), e.g. a
    validation set held out of the training set. The parts depend only on `seed` and the
    dataset's length; each keeps its samples in the dataset's order. A part gets its share
    of the samples rounded down or up (the largest remainders round up), and at least one
    sample if its share is positive (taken from the largest part).

    Example:
        >>> train, val = random_split(ArrayDataset(x, y), [0.9, 0.1], seed=0)

    Raises:
        ValueError: shares that are negative or do not sum to 1, or a dataset too small to
            give every part with a positive share a sample.
    """
    shares = np.asarray(fractions, dtype=np.float64)
    if shares.ndim != 1 or (shares < 0).any() or not np.isclose(shares.sum(), 1.0):
        raise ValueError(f"random_split: fractions must be >= 0 and sum to 1; got {fractions}")
    n = len(dataset)
    positive = int((shares > 0).sum())
    if n < positive:
        raise ValueError(f"random_split: {n} samples cannot fill {positive} parts")
    counts = part_sizes(shares, n)
    order = np.random.default_rng(seed).permutation(n)
    edges = np.cumsum(counts)
    starts = edges - counts
    return [Subset(dataset, np.sort(order[a:b])) for a, b in zip(starts, edges)]


def part_sizes(shares: Sequence[float], n: int) -> np.ndarray:
    """How many of n samples each share gets, as random_split sizes its parts."""
    shares = np.asarray(shares, dtype=np.float64)
    exact = shares * n
    counts = np.floor(exact).astype(np.int64)
    by_remainder = np.argsort(-(exact - counts), kind="stable")
    counts[by_remainder[:n - counts.sum()]] += 1
    for i in np.flatnonzero((shares > 0) & (counts == 0)):
        counts[np.argmax(counts)] -= 1  # n >= the number of positive shares, so max > 1
        counts[i] = 1
    return counts


class TensorDataset(ArrayDataset):
    """Samples are rows of equally long tensors (PyTorch's TensorDataset): dataset[i] is
    the tuple of each tensor's row i.

    Example:
        >>> ds = TensorDataset(lm.zeros(100, 4), lm.zeros(100, dtype=lm.long))
        >>> x, y = ds[0]; x.shape, len(ds)
        (lamina.Size([4]), 100)
    """

    def __init__(self, *tensors: Any) -> None:
        from lamina.autograd.tensor import Tensor

        self.tensors = tuple(t if isinstance(t, Tensor) else Tensor(np.asarray(t))
                             for t in tensors)
        try:
            super().__init__(*[t.array for t in self.tensors])
        except ValueError as e:
            raise ValueError(str(e).replace("ArrayDataset: arrays", "TensorDataset: "
                                            "tensors")) from None

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        return tuple(t[index] for t in self.tensors)


def default_collate(samples: Sequence[Any]) -> tuple[Any, ...]:
    """Stack a list of samples (tuples of arrays) into a tuple of batch arrays."""
    first = samples[0]
    if isinstance(first, tuple):
        return tuple(np.stack([s[i] for s in samples]) for i in range(len(first)))
    return (np.stack(samples),)


class DataLoader:
    """Batches of a dataset, with PyTorch's signature and defaults (batch_size 1), and a
    new order every epoch when shuffling.

    The order of epoch e is a permutation fixed by (seed, e). Without `seed` (PyTorch's
    way), the seed is drawn from `generator` or lamina's default generator when the loader
    is made, so `lamina.manual_seed` decides the orders; epochs count up with each pass
    (or as `set_epoch` says, which the Trainer calls), so a run resumed at epoch e sees
    exactly the batches an uninterrupted run would.

    Args:
        dataset: a Dataset (or anything with __len__ and __getitem__).
        batch_size: samples per batch.
        shuffle: permute the samples each epoch.
        sampler: an iterable of sample indices giving the order (instead of shuffle).
        batch_sampler: an iterable of lists of indices, one list a batch.
        num_workers: accepted; batches are loaded in this process.
        collate_fn: turns a list of samples into a batch (when the dataset has no
            get_batch); `collate` is lamina's earlier name.
        drop_last: drop a last batch smaller than batch_size.
        generator: the lamina.Generator the seed is drawn from.
        seed: lamina's: a fixed shuffling seed (job files give one).
        shard: lamina's: (index, count): iterate only part `index` of `count` equal parts
            of each epoch's order (a data-parallel worker's share).

    Yields:
        Tuples of Tensors, one per field of a sample: (x, y).

    Example:
        >>> loader = DataLoader(TensorDataset(lm.zeros(10, 2)), batch_size=4, shuffle=True)
        >>> [len(b[0]) for b in loader]
        [4, 4, 2]
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[Sequence[Any]], tuple[Any, ...]] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Any = None, multiprocessing_context: Any = None,
                 generator: Any = None, *, prefetch_factor: Any = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True, seed: int | None = None,
                 collate: Callable[[Sequence[Any]], tuple[Any, ...]] | None = None,
                 shard: tuple[int, int] = (0, 1)) -> None:
        if batch_sampler is not None:
            batch_size = 1
        if batch_size is None or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be >= 1; got {batch_size}")
        if not 0 <= shard[0] < shard[1]:
            raise ValueError(f"DataLoader: shard must be (index, count), 0 <= index < count; "
                             f"got {shard}")
        if shuffle and sampler is not None:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        self.shard = shard
        self.dataset, self.batch_size = dataset, batch_size
        self.shuffle, self.drop_last = bool(shuffle), drop_last
        self.sampler, self.batch_sampler, self.num_workers = sampler, batch_sampler, num_workers
        if seed is None:
            from lamina.random import numpy_rng

            seed = int(numpy_rng(generator).integers(2**63)) if self.shuffle else 0
        self.seed = seed
        self.collate = collate_fn or collate or default_collate
        self.epoch = 0
        self._counting = True  # epochs count up per pass until set_epoch takes over

    def set_epoch(self, epoch: int) -> None:
        """Choose which epoch's order the next iteration uses."""
        self.epoch = epoch
        self._counting = False

    def order(self) -> np.ndarray:
        """This epoch's sample order: the sampler's, a permutation fixed by (seed, epoch),
        or 0..n-1; with a shard, only that shard's equal part of it."""
        n = len(self.dataset)
        if self.sampler is not None:
            order = np.fromiter((int(i) for i in self.sampler), np.int64)
            n = len(order)
        else:
            order = (np.random.default_rng([self.seed, self.epoch]).permutation(n)
                     if self.shuffle else np.arange(n))
        index, count = self.shard
        if count == 1:
            return order
        per = n // count
        return order[index * per:(index + 1) * per]

    def __len__(self) -> int:
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = (len(self.sampler) if self.sampler is not None else len(self.dataset))
        n //= self.shard[1]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _batches(self) -> Iterator[np.ndarray]:
        if self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield np.asarray(list(indices), np.int64)
            return
        order = self.order()
        if self._counting:
            self.epoch += 1
        for start in range(0, len(order), self.batch_size):
            yield order[start:start + self.batch_size]

    def __iter__(self) -> Iterator[tuple[Tensor, ...]]:
        get_batch = getattr(self.dataset, "get_batch", None)
        for idx in self._batches():
            if self.drop_last and len(idx) < self.batch_size:
                return
            batch = get_batch(idx) if get_batch else self.collate([self.dataset[i] for i in idx])
            yield tuple(Tensor(np.asarray(b)) for b in batch)
