"""Samplers, as `torch.utils.data`'s: the order in which a DataLoader visits a dataset's
indices, and how it groups them into batches.

A random sampler draws from its `generator`, or from lamina's default generator (so
`lamina.manual_seed` decides it), and each pass over it draws a new order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any

import numpy as np

from lamina.random import numpy_rng


class Sampler:
    """Base class: iterating gives dataset indices (or, for a batch sampler, lists)."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1.

    Examples:
        >>> list(SequentialSampler(range(3)))
        [0, 1, 2]
    """

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order of the indices each pass; with `replacement`, `num_samples` draws
    (default len(data_source)) with replacement.

    Examples:
        >>> sorted(RandomSampler(range(4)))
        [0, 1, 2, 3]
    """

    def __init__(self, data_source: Sized, replacement: bool = False,
                 num_samples: int | None = None, generator: Any = None) -> None:
        if num_samples is not None and num_samples < 1:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        rng, n = numpy_rng(self.generator), len(self.data_source)
        if self.replacement:
            return iter(rng.integers(0, n, self.num_samples).tolist())
        rounds = -(-self.num_samples // n)
        order = np.concatenate([rng.permutation(n) for _ in range(rounds)])
        return iter(order[:self.num_samples].tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order each pass.

    Examples:
        >>> sorted(SubsetRandomSampler([5, 1, 3]))
        [1, 3, 5]
    """

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        order = numpy_rng(self.generator).permutation(len(self.indices))
        return (self.indices[i] for i in order)

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights` (with
    replacement by default): rebalances classes.

    Examples:
        >>> set(WeightedRandomSampler([0.0, 1.0, 0.0], 5))
        {1}
    """

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True,
                 generator: Any = None) -> None:
        weights = np.asarray(getattr(weights, "array", weights), np.float64).reshape(-1)
        if num_samples < 1 or (weights < 0).any() or not weights.sum() > 0:
            raise ValueError(f"WeightedRandomSampler: expected num_samples >= 1 and weights "
                             f">= 0 with a positive sum; got {num_samples} and {weights}")
        if not replacement and num_samples > (weights > 0).sum():
            raise RuntimeError("WeightedRandomSampler: cannot draw more samples than there "
                               "are positive weights without replacement")
        self.weights, self.num_samples = weights, num_samples
        self.replacement, self.generator = replacement, generator

    def __iter__(self) -> Iterator[int]:
        p = self.weights / self.weights.sum()
        draws = numpy_rng(self.generator).choice(len(p), self.num_samples, self.replacement, p)
        return iter(draws.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler` (the last one shorter, unless
    `drop_last`).

    Examples:
        >>> list(BatchSampler(SequentialSampler(range(5)), 2, drop_last=False))
        [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for i in self.sampler:
            batch.append(int(i))
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class DistributedSampler(Sampler):
    """The indices of rank `rank` of `num_replicas` processes, as PyTorch's: every
    replica takes every num_replicas-th index of one order (a permutation drawn from
    seed + epoch where `shuffle`, the same in every replica; call set_epoch each epoch),
    the order padded with its first indices to a multiple of num_replicas, or cut to
    one with `drop_last`. Without a process group lamina is one process: replicas 1,
    rank 0, unless given.

    Examples:
        >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
        [1, 3, 0]
    """

    def __init__(self, dataset: Sized, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        # lamina forms no process group (lamina.distributed.process_group): world size 1
        num_replicas = 1 if num_replicas is None else num_replicas
        rank = 0 if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = -(-(n - num_replicas) // num_replicas)
        else:
            self.num_samples = -(-n // num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        order = (np.random.default_rng(self.seed + self.epoch).permutation(n) if self.shuffle
                 else np.arange(n))
        if self.drop_last:
            order = order[:self.total_size]
        elif self.total_size > n:
            order = np.resize(order, self.total_size)  # wraps round to the first indices
        return iter(order[self.rank:self.total_size:self.num_replicas].tolist())

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """The epoch whose order the next pass draws (with shuffle)."""
        self.epoch = epoch
