"""DataLoader: batches of a dataset, with PyTorch's signature and behaviour, loaded in this
process or in worker processes."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.data.collate import default_collate, default_convert
from lamina.data.dataset import IterableDataset
from lamina.data.workers import WorkerPool
from lamina.random import numpy_rng


class DataLoader:
    """Batches of a dataset, with PyTorch's signature and defaults (batch_size 1), and a
    new order every epoch when shuffling.

    The order of epoch e is a permutation fixed by (seed, e). Without `seed` (PyTorch's
    way), the seed is drawn from `generator` or lamina's default generator when the loader
    is made, so `lamina.manual_seed` decides the orders; epochs count up with each pass
    (or as `set_epoch` says, which the Trainer calls), so a run resumed at epoch e sees
    exactly the batches an uninterrupted run would.

    Args:
        dataset: a Dataset (anything with __len__ and __getitem__), or an
            IterableDataset (a stream of samples).
        batch_size: samples per batch; None yields samples one by one, unbatched.
        shuffle: permute the samples each epoch.
        sampler: an iterable of sample indices giving the order (instead of shuffle).
        batch_sampler: an iterable of lists of indices, one list a batch.
        num_workers: load batches in this many worker processes (0: in this one), in
            order; a worker's exception is raised here with the worker's traceback.
        collate_fn: turns a list of samples into a batch (default `default_collate`;
            when the dataset has `get_batch` and no collate_fn is given, one call of it
            reads the whole batch); `collate` is lamina's earlier name.
        drop_last: drop a last batch smaller than batch_size.
        timeout: seconds to wait for a worker's batch (0: no limit).
        worker_init_fn: called with the worker id in each worker, after seeding it.
        multiprocessing_context: a context or its name ("fork", "spawn", "forkserver").
        generator: the lamina.Generator the seed is drawn from.
        prefetch_factor: batches loaded ahead per worker (default 2).
        persistent_workers: keep the workers between epochs.
        pin_memory, pin_memory_device, in_order: accepted; there is no device memory
            to pin, and batches always arrive in order.
        seed: lamina's: a fixed shuffling seed (job files give one).
        shard: lamina's: (index, count): iterate only part `index` of `count` equal parts
            of each epoch's order (a data-parallel worker's share).

    Yields:
        Batches shaped like the samples: for a dataset of (x, y) pairs, [x, y].

    Examples:
        >>> loader = DataLoader(TensorDataset(lm.zeros(10, 2)), batch_size=4, shuffle=True)
        >>> [len(b[0]) for b in loader]
        [4, 4, 2]
    """

    def __init__(self, dataset: Any, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Any = None, batch_sampler: Any = None, num_workers: int = 0,
                 collate_fn: Callable[[Sequence[Any]], Any] | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context: Any = None, generator: Any = None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True, seed: int | None = None,
                 collate: Callable[[Sequence[Any]], Any] | None = None,
                 shard: tuple[int, int] = (0, 1)) -> None:
        _check(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
               prefetch_factor, persistent_workers, drop_last, shard)
        if batch_sampler is not None:
            batch_size = None
        self.dataset, self.batch_size, self.shard = dataset, batch_size, shard
        self.shuffle, self.drop_last = bool(shuffle), drop_last
        self.sampler, self.batch_sampler, self.num_workers = sampler, batch_sampler, num_workers
        self.timeout, self.worker_init_fn = timeout, worker_init_fn
        self.multiprocessing_context, self.generator = multiprocessing_context, generator
        self.prefetch_factor = prefetch_factor or 2
        self.persistent_workers, self.pin_memory = persistent_workers, pin_memory
        if seed is None:
            seed = int(numpy_rng(generator).integers(2**63)) if self.shuffle else 0
        self.seed = seed
        self.collate_fn = collate_fn or collate
        self.epoch = 0
        self._counting = True  # epochs count up per pass until set_epoch takes over
        self._pool: WorkerPool | None = None

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
        if isinstance(self.dataset, IterableDataset):
            raise TypeError("DataLoader: an IterableDataset has no length")
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        n //= self.shard[1]
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _batches(self) -> Iterator[Any]:
        """Each batch's indices (a single index when batch_size is None)."""
        if self.batch_sampler is not None:
            for indices in self.batch_sampler:
                yield np.asarray(list(indices), np.int64)
            return
        order = self.order()
        if self._counting:
            self.epoch += 1
        if self.batch_size is None:
            yield from (int(i) for i in order)
            return
        for start in range(0, len(order), self.batch_size):
            batch = order[start:start + self.batch_size]
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def _fetcher(self) -> _Fetch:
        return _Fetch(self.dataset, self.collate_fn, self.batch_size, self.drop_last)

    def __iter__(self) -> Iterator[Any]:
        streaming = isinstance(self.dataset, IterableDataset)
        if self.num_workers == 0:
            fetch = self._fetcher()
            return fetch(None) if streaming else map(fetch, self._batches())
        tasks = itertools.repeat(None) if streaming else self._batches()
        return self._from_workers(tasks)

    def _from_workers(self, tasks: Iterator[Any]) -> Iterator[Any]:
        pool = self._pool
        if pool is None:
            seed = int(numpy_rng(self.generator).integers(2**62))
            pool = WorkerPool(self.num_workers, self.dataset, self._fetcher(),
                              self.worker_init_fn, seed, self.multiprocessing_context,
                              self.timeout)
            if self.persistent_workers:
                self._pool = pool
        try:
            yield from pool.run(tasks, self.prefetch_factor)
        finally:
            if not self.persistent_workers:
                pool.close()

    def __del__(self) -> None:
        if getattr(self, "_pool", None) is not None:
            self._pool.close()


class _Fetch:
    """Loads one batch from its indices (or, given None, a stream of batches of an
    iterable dataset); a plain object, so it reaches spawned workers too."""

    def __init__(self, dataset: Any, collate_fn: Any, batch_size: int | None,
                 drop_last: bool) -> None:
        self.dataset, self.collate_fn = dataset, collate_fn
        self.batch_size, self.drop_last = batch_size, drop_last

    def __call__(self, indices: Any) -> Any:
        if indices is None:
            return self._stream()
        if isinstance(indices, (int, np.integer)):  # batch_size None: one sample, unbatched
            return (self.collate_fn or default_convert)(self.dataset[indices])
        get_batch = getattr(self.dataset, "get_batch", None)
        if get_batch is not None and self.collate_fn is None:
            return [Tensor(np.asarray(b)) for b in get_batch(indices)]
        return (self.collate_fn or default_collate)([self.dataset[int(i)] for i in indices])

    def _stream(self) -> Iterator[Any]:
        samples = iter(self.dataset)
        if self.batch_size is None:
            yield from map(self.collate_fn or default_convert, samples)
            return
        while True:
            batch = list(itertools.islice(samples, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield (self.collate_fn or default_collate)(batch)


def _check(dataset: Any, batch_size: Any, shuffle: Any, sampler: Any, batch_sampler: Any,
           num_workers: int, prefetch_factor: Any, persistent_workers: bool, drop_last: bool,
           shard: tuple[int, int]) -> None:
    """PyTorch's argument checks, with its messages."""
    if batch_size is not None and (not isinstance(batch_size, (int, np.integer))
                                   or batch_size < 1):
        raise ValueError(f"batch_size should be a positive integer value, but got "
                         f"batch_size={batch_size}")
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if num_workers == 0 and (prefetch_factor is not None or persistent_workers):
        raise ValueError("prefetch_factor and persistent_workers need num_workers > 0")
    if shuffle and sampler is not None:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                      or drop_last):
        raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                         "shuffle, sampler, and drop_last")
    if isinstance(dataset, IterableDataset) and (shuffle or sampler is not None
                                                 or batch_sampler is not None):
        raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, "
                         "sampler and batch_sampler options")
    if not 0 <= shard[0] < shard[1]:
        raise ValueError(f"DataLoader: shard must be (index, count), 0 <= index < count; "
                         f"got {shard}")
