"""lamina.utils.data against torch.utils.data: collation, samplers, loaders in this process
and in real worker processes, iterable datasets, concatenation and splits."""

from __future__ import annotations

import collections
import os

import numpy as np
import pytest

import lamina as lm
from lamina.utils import data as ldata

torch = pytest.importorskip("torch")
tdata = torch.utils.data


def _same(ours, theirs):
    """The same nested structure, values and dtypes."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, lm.Tensor)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    elif isinstance(theirs, dict):
        assert ours.keys() == theirs.keys()
        for k in theirs:
            _same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    else:
        assert ours == theirs


Pair = collections.namedtuple("Pair", "x y")


@pytest.mark.parametrize("samples", [
    [(np.arange(3.0), 1), (np.ones(3), 0)],
    [{"image": np.zeros((2, 2), np.float32), "label": 3, "name": "a"},
     {"image": np.ones((2, 2), np.float32), "label": 4, "name": "b"}],
    [Pair(1.5, True), Pair(2.5, False)],
    [[np.int32(1), [2.0, 3.0]], [np.int32(4), [5.0, 6.0]]],
], ids=["tuple", "dict", "namedtuple", "nested"])
def test_default_collate_matches_pytorch(samples) -> None:
    _same(ldata.default_collate(samples), tdata.default_collate(samples))


class Squares(tdata.Dataset):
    """A map-style dataset both frameworks accept (they only call len and getitem)."""

    def __len__(self):
        return 11

    def __getitem__(self, i):
        if i == 7 and os.environ.get("LAMINA_TEST_FAIL"):
            raise ValueError("sample 7 is broken")
        return np.full(2, i * i, np.float32), i


@pytest.mark.parametrize("kwargs", [
    dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=None),
    dict(batch_sampler=[[3, 1], [0, 2, 4]]),
    dict(batch_size=4, collate_fn=lambda s: [len(s), s[0][1]]),
], ids=["batches", "drop-last", "unbatched", "batch-sampler", "collate-fn"])
@pytest.mark.parametrize("workers", [0, 2])
def test_a_loader_yields_pytorch_s_batches(kwargs, workers) -> None:
    ours = list(ldata.DataLoader(Squares(), num_workers=workers, **kwargs))
    theirs = list(tdata.DataLoader(Squares(), **kwargs))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        _same(a, b)


def test_a_worker_s_exception_arrives_with_its_traceback(monkeypatch) -> None:
    monkeypatch.setenv("LAMINA_TEST_FAIL", "1")
    loader = ldata.DataLoader(Squares(), batch_size=2, num_workers=2)
    with pytest.raises(ValueError, match=r"(?s)Caught ValueError in DataLoader worker "
                       r"process 1\.\nOriginal Traceback .*in __getitem__.*sample 7 is broken"):
        list(loader)


def test_workers_are_seeded_initialised_and_kept_when_persistent() -> None:
    class Ids(ldata.Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, i):
            info = ldata.get_worker_info()
            return np.array([info.id, os.getpid(), float(lm.rand(1).item())])

    lm.manual_seed(0)
    loader = ldata.DataLoader(Ids(), batch_size=2, num_workers=2, persistent_workers=True)
    first = np.concatenate([b.numpy() for b in loader])
    second = np.concatenate([b.numpy() for b in loader])
    assert first[:, 0].tolist() == [0, 0, 1, 1, 0, 0, 1, 1]  # batch i from worker i % 2
    assert set(first[:, 1]) == set(second[:, 1]) and os.getpid() not in first[:, 1]
    assert len(set(first[:, 2])) == 8  # each worker draws its own numbers
    lm.manual_seed(0)
    again = ldata.DataLoader(Ids(), batch_size=2, num_workers=2)
    np.testing.assert_array_equal(np.concatenate([b.numpy() for b in again])[:, 2], first[:, 2])


class Stream(ldata.IterableDataset):
    """0..9, each worker taking every num_workers-th number."""

    def __iter__(self):
        info = ldata.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, 10, step))


class TorchStream(tdata.IterableDataset):
    def __iter__(self):
        info = tdata.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, 10, step))


@pytest.mark.parametrize("workers", [0, 2])
def test_an_iterable_dataset_streams_as_pytorch_s(workers) -> None:
    ours = [b.tolist() for b in ldata.DataLoader(Stream(), batch_size=2, num_workers=workers)]
    theirs = [b.tolist() for b in tdata.DataLoader(TorchStream(), batch_size=2,
                                                   num_workers=workers)]
    assert ours == theirs


def test_shuffling_draws_a_new_order_each_epoch_decided_by_the_seed() -> None:
    lm.manual_seed(3)
    loader = ldata.DataLoader(Squares(), batch_size=11, shuffle=True)
    first, second = (next(iter(loader))[1].tolist() for _ in range(2))
    assert sorted(first) == list(range(11)) and first != second
    lm.manual_seed(3)
    again = ldata.DataLoader(Squares(), batch_size=11, shuffle=True)
    assert [next(iter(again))[1].tolist() for _ in range(2)] == [first, second]


def test_samplers_behave_as_pytorch_s() -> None:
    seq = list(range(7))
    assert list(ldata.SequentialSampler(seq)) == list(tdata.SequentialSampler(seq))
    for drop in (True, False):
        assert (list(ldata.BatchSampler(ldata.SequentialSampler(seq), 3, drop))
                == list(tdata.BatchSampler(tdata.SequentialSampler(seq), 3, drop)))
        assert len(ldata.BatchSampler(seq, 3, drop)) == len(tdata.BatchSampler(seq, 3, drop))
    assert sorted(ldata.RandomSampler(seq)) == seq
    draws = list(ldata.RandomSampler(seq, replacement=True, num_samples=20))
    assert len(draws) == 20 and set(draws) <= set(seq)
    assert len(list(ldata.RandomSampler(seq, num_samples=10))) == 10
    assert sorted(ldata.SubsetRandomSampler([9, 4, 6])) == [4, 6, 9]
    drawn = np.array(list(ldata.WeightedRandomSampler([1.0, 0.0, 3.0], 4000)))
    assert set(drawn) == {0, 2} and abs((drawn == 2).mean() - 0.75) < 0.03
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        ldata.BatchSampler(seq, 0, False)
    loader = ldata.DataLoader(Squares(), batch_size=4, sampler=ldata.SubsetRandomSampler([1, 5]))
    assert sorted(next(iter(loader))[1].tolist()) == [1, 5]


def test_concat_dataset_and_random_split_as_pytorch_s() -> None:
    a, b = ldata.TensorDataset(lm.arange(3)), ldata.TensorDataset(lm.arange(10, 14))
    ours, theirs = a + b, tdata.ConcatDataset([tdata.TensorDataset(torch.arange(3)),
                                               tdata.TensorDataset(torch.arange(10, 14))])
    assert len(ours) == len(theirs) == 7
    assert [ours[i][0].item() for i in range(-7, 7)] == [theirs[i][0].item()
                                                          for i in range(-7, 7)]
    parts = ldata.random_split(ours, [4, 3], generator=lm.Generator().manual_seed(1))
    assert [len(p) for p in parts] == [4, 3]
    assert sorted(i for p in parts for i in p.indices.tolist()) == list(range(7))
    with pytest.raises(ValueError, match=r"counts that sum to the dataset's length \(7\)"):
        ldata.random_split(ours, [4, 4])


def test_loader_argument_errors_are_pytorch_s() -> None:
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        ldata.DataLoader(Squares(), shuffle=True, sampler=[0, 1])
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        ldata.DataLoader(Squares(), batch_size=2, batch_sampler=[[0]])
    with pytest.raises(ValueError, match="expected unspecified shuffle"):
        ldata.DataLoader(Stream(), shuffle=True)
    with pytest.raises(TypeError, match="IterableDataset has no length"):
        len(ldata.DataLoader(Stream()))


@pytest.mark.parametrize("n", [5, 6, 7])
@pytest.mark.parametrize("replicas", [1, 2, 3])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_gives_each_rank_pytorchs_share(n, replicas, drop_last):
    for rank in range(replicas):
        ours = ldata.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                        drop_last=drop_last)
        theirs = torch.utils.data.DistributedSampler(range(n), replicas, rank, shuffle=False,
                                                     drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
    shuffled = [ldata.DistributedSampler(range(n), replicas, r, seed=3) for r in range(replicas)]
    for s in shuffled:
        s.set_epoch(4)
    seen = [i for s in shuffled for i in s]
    assert sorted(set(seen)) == list(range(n)) or drop_last  # the ranks cover the dataset
    assert [list(s) for s in shuffled] == [list(s) for s in shuffled]  # one order per epoch
    first = list(shuffled[0])
    shuffled[0].set_epoch(5)
    assert n < 3 or list(shuffled[0]) != first or replicas == n  # another epoch, another order
    with pytest.raises(ValueError, match="Invalid rank 2"):
        ldata.DistributedSampler(range(n), 2, 2)


def test_chain_and_stack_datasets_give_pytorchs_items():
    class Count(ldata.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    class TCount(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    assert list(ldata.ChainDataset([Count(), Count()])) == list(
        torch.utils.data.ChainDataset([TCount(), TCount()]))
    ours = ldata.StackDataset(a=[1, 2, 3], b=["x", "y", "z"])
    theirs = torch.utils.data.StackDataset(a=[1, 2, 3], b=["x", "y", "z"])
    assert len(ours) == len(theirs) and [ours[i] for i in range(3)] == [theirs[i] for i in range(3)]
    assert ldata.StackDataset([1, 2], [3, 4])[1] == torch.utils.data.StackDataset([1, 2], [3, 4])[1]
    with pytest.raises(ValueError, match="one length"):
        ldata.StackDataset([1], [1, 2])
