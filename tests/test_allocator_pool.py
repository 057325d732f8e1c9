"""lamina.allocator.empty: arrays past malloc's mmap threshold reuse the memory of earlier
ones nothing refers to any more, and never the memory of one still in use."""

from __future__ import annotations

import numpy as np
import pytest

from lamina import allocator

BIG = (allocator.MMAP_THRESHOLD // 4 + 1024,)  # float32 elements just past the threshold


@pytest.fixture(autouse=True)
def empty_pool(monkeypatch):
    monkeypatch.setattr(allocator, "_pool", {})


def test_a_freed_array_s_memory_is_handed_out_again():
    a = allocator.empty(BIG, np.float32)
    a[:3] = 7
    address = a.__array_interface__["data"][0]
    del a
    b = allocator.empty(BIG, np.float32)
    assert b.__array_interface__["data"][0] == address


def test_memory_any_view_still_reads_is_not_handed_out():
    a = allocator.empty(BIG, np.float32)
    view = a.reshape(-1, 1024)[::2].T  # a view of a view: it refers to the block too
    view[0, 0] = 1.0
    del a
    b = allocator.empty(BIG, np.float32)
    assert not np.shares_memory(b, view)
    b[:] = 5.0  # writing b must not change what the view reads
    assert view[0, 0] == 1.0
    del view, b
    assert len(allocator._pool[BIG[0] * 4]) == 2  # both free now, both kept


def test_small_arrays_and_arrays_past_the_cap_come_from_numpy(monkeypatch):
    small = allocator.empty((1000,), np.float64)
    assert small.base is None and small.shape == (1000,) and small.dtype == np.float64
    monkeypatch.setattr(allocator, "POOL_BYTES", BIG[0] * 4 * 2)
    held = [allocator.empty(BIG, np.float32) for _ in range(3)]  # the third is past the cap
    assert [h.base is None for h in held] == [False, False, True]
    assert held[0].shape == BIG and held[0].dtype == np.float32
    del held
    other = allocator.empty((BIG[0] + 4096,), np.float32)  # frees the cap for a new size
    assert other.base is not None and list(allocator._pool) == [other.nbytes]
