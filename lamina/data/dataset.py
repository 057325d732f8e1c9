"""Datasets, as `torch.utils.data`'s: indexable collections of samples, streams of them,
and their subsets, splits and concatenations."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.random import numpy_rng


class Dataset:
    """Base class: `__len__` and `__getitem__(i)` returning one sample (a tuple of arrays).

    A subclass may also define `get_batch(indices)` returning the stacked samples at once,
    which DataLoader prefers to collating one sample at a time.
    """

    def __len__(self) -> int:
        raise NotImplementedError

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError

    def __add__(self, other: Dataset) -> ConcatDataset:
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base class of a stream of samples: a subclass defines `__iter__`. In a DataLoader
    with workers, each worker iterates its own copy, so a dataset that should not repeat
    its samples splits its stream by `lamina.utils.data.get_worker_info()`.

    Examples:
        >>> class Count(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(5))
        >>> [b.tolist() for b in DataLoader(Count(), batch_size=2)]
        [[0, 1], [2, 3], [4]]
    """

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    def __add__(self, other: Any) -> Any:
        raise TypeError("an IterableDataset cannot be concatenated with +; chain the streams")


class ChainDataset(IterableDataset):
    """Streams one after another.

    Examples:
        >>> class Count(IterableDataset):
        ...     def __iter__(self):
        ...         return iter(range(2))
        >>> list(ChainDataset([Count(), Count()]))
        [0, 1, 0, 1]
    """

    def __init__(self, datasets: Iterable[Any]) -> None:
        self.datasets = datasets

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            yield from d

    def __len__(self) -> int:
        try:
            return sum(len(d) for d in self.datasets)
        except NotImplementedError:  # a stream without a length: len() says so as a
            raise TypeError("ChainDataset: a stream in it has no length") from None


class StackDataset(Dataset):
    """Datasets of one length side by side: item i is the tuple (or, given by name, the
    dict) of their items i.

    Examples:
        >>> ds = StackDataset(x=[1, 2], y=["a", "b"])
        >>> len(ds), ds[1]
        (2, {'x': 2, 'y': 'b'})
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args and kwargs:
            raise ValueError("StackDataset: give the datasets by position or by name, not both")
        parts = list(args) or list(kwargs.values())
        if not parts:
            raise ValueError("StackDataset: at least one dataset is needed")
        lengths = {len(d) for d in parts}
        if len(lengths) != 1:
            raise ValueError(f"StackDataset: the datasets must have one length; got "
                             f"{sorted(len(d) for d in parts)}")
        self.datasets: Any = kwargs or tuple(args)
        self._length = lengths.pop()

    def __getitem__(self, index: int) -> Any:
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self) -> int:
        return self._length


class ConcatDataset(Dataset):
    """Datasets one after another: index i runs through the first, then the second...

    Examples:
        >>> ds = ConcatDataset([TensorDataset(lm.zeros(3)), TensorDataset(lm.ones(2))])
        >>> len(ds), ds[3][0].item()
        (5, 1.0)
    """

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        part = bisect.bisect_right(self.cumulative_sizes, index)
        if part == len(self.datasets):
            raise IndexError(f"index {index} is out of range for a ConcatDataset of "
                             f"{len(self)} samples")
        start = self.cumulative_sizes[part - 1] if part else 0
        return self.datasets[part][index - start]


class ArrayDataset(Dataset):
    """Samples are rows of equally long arrays: ArrayDataset(x, y)[i] == (x[i], y[i]).

    Examples:
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

    Examples:
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


def random_split(dataset: Any, lengths: Sequence[float], generator: Any = None, *,
                 seed: int | None = None) -> list[Subset]:
    """Cut `dataset` into disjoint random parts of the given `lengths`: counts summing
    to its length, or fractions summing to 1 (as PyTorch's; a part gets its share rounded
    down or up, the largest remainders rounding up, and at least one sample if its share
    is positive). The order is drawn from `generator` (default lamina's), or fixed by
    lamina's `seed`: then it depends only on the seed and the length, and each part keeps
    its samples in the dataset's order (a job's held-out validation set).

    Examples:
        >>> train, val = random_split(TensorDataset(lm.zeros(10)), [0.8, 0.2])
        >>> len(train), len(val)
        (8, 2)

    Raises:
        ValueError: lengths that sum neither to the length nor to 1, or a dataset too
            small to give every part with a positive share a sample.
    """
    shares = np.asarray(lengths, dtype=np.float64)
    n = len(dataset)
    if shares.ndim != 1 or (shares < 0).any():
        raise ValueError(f"random_split: lengths must be counts or fractions >= 0; got "
                         f"{list(lengths)}")
    counted = shares.sum() == n and np.all(shares == np.round(shares))
    if counted:
        counts = shares.astype(np.int64)
    elif np.isclose(shares.sum(), 1.0):
        if n < int((shares > 0).sum()):
            raise ValueError(f"random_split: {n} samples cannot fill {int((shares > 0).sum())} "
                             "parts")
        counts = part_sizes(shares, n)
    else:
        raise ValueError(f"random_split: lengths must be counts that sum to the dataset's "
                         f"length ({n}) or fractions that sum to 1; got {list(lengths)}")
    rng = np.random.default_rng(seed) if seed is not None else numpy_rng(generator)
    order = rng.permutation(n)
    edges = np.cumsum(counts)
    parts = [order[a:b] for a, b in zip(edges - counts, edges)]
    return [Subset(dataset, np.sort(p) if seed is not None else p) for p in parts]


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

    Examples:
        >>> ds = TensorDataset(lm.zeros(100, 4), lm.zeros(100, dtype=lm.long))
        >>> x, y = ds[0]; x.shape, len(ds)
        (lamina.Size([4]), 100)
    """

    def __init__(self, *tensors: Any) -> None:
        self.tensors = tuple(t if isinstance(t, Tensor) else Tensor(np.asarray(t))
                             for t in tensors)
        try:
            super().__init__(*[t.array for t in self.tensors])
        except ValueError as e:
            raise ValueError(str(e).replace("ArrayDataset: arrays", "TensorDataset: "
                                            "tensors")) from None

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        return tuple(t[index] for t in self.tensors)
