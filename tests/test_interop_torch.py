"""Sharing memory with PyTorch and NumPy, as PyTorch shares it: DLPack both ways without a
copy, frombuffer views, and empty_strided / empty_permuted layouts equal to PyTorch's."""

from __future__ import annotations

import array
import warnings

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")


def test_lamina_and_pytorch_read_each_others_memory_without_a_copy():
    ours = lm.arange(4.0)
    theirs = torch.from_dlpack(ours)
    ours.add_(10.0)  # written in place: PyTorch's view sees it
    np.testing.assert_array_equal(theirs.numpy(), [10.0, 11.0, 12.0, 13.0])
    source = torch.arange(3.0)
    view = lm.from_dlpack(source)
    source.mul_(2)
    np.testing.assert_array_equal(view.numpy(), [0.0, 2.0, 4.0])
    capsule = lm.from_dlpack(torch.utils.dlpack.to_dlpack(torch.ones(2, 3)))
    assert tuple(capsule.shape) == (2, 3) and capsule.dtype == lm.float32
    back = torch.utils.dlpack.from_dlpack(lm.utils.dlpack.to_dlpack(lm.tensor([1, 2])))
    assert back.tolist() == [1, 2] and back.dtype == torch.int64


def test_from_dlpack_of_numpy_shares_and_a_tensor_stays_itself():
    a = np.arange(3.0)
    t = lm.from_dlpack(a)
    a[1] = 7.0
    assert t.tolist() == [0.0, 7.0, 2.0]
    assert lm.from_dlpack(t) is t
    np.testing.assert_array_equal(np.from_dlpack(lm.ones(2, 2)), np.ones((2, 2), np.float32))


@pytest.mark.parametrize("make, kwargs", [
    (lambda: bytearray(range(16)), {"dtype": "int32"}),
    (lambda: bytearray(range(16)), {"dtype": "uint8", "count": 5, "offset": 3}),
    (lambda: array.array("f", [1.5, 2.5, -1.0]), {"dtype": "float32"}),
    (lambda: array.array("d", [1.5, 2.5]), {"dtype": "float64", "offset": 8})])
def test_frombuffer_views_the_buffer_as_pytorchs(make, kwargs):
    ours_buffer, theirs_buffer = make(), make()
    ours = lm.frombuffer(ours_buffer, **{**kwargs, "dtype": getattr(lm, kwargs["dtype"])})
    theirs = torch.frombuffer(theirs_buffer, **{**kwargs, "dtype": getattr(torch, kwargs["dtype"])})
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    ours.fill_(0)  # a view: the buffer changes
    assert not any(memoryview(ours_buffer).cast("B")[kwargs.get("offset", 0):][:ours.numel()
                                                                               * ours.element_size()])


def test_frombuffer_of_read_only_bytes_warns_as_pytorchs():
    for lib in (torch, lm):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            t = lib.frombuffer(b"\x01\x00\x00\x00", dtype=lib.int32)
        assert t.tolist() == [1] and any(issubclass(w.category, UserWarning) for w in seen)


@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((2, 3, 4), (12, 1, 3)),
                                          ((4,), (2,)), ((2, 0, 3), (3, 3, 1))])
def test_empty_strided_has_pytorchs_layout(size, stride):
    ours, theirs = lm.empty_strided(size, stride), torch.empty_strided(size, stride)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    assert str(ours.dtype) == str(theirs.dtype).split(".")[1]


@pytest.mark.parametrize("size, order", [((2, 3, 4), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)),
                                         ((3, 2), (1, 0))])
def test_empty_permuted_has_pytorchs_layout(size, order):
    ours, theirs = lm.empty_permuted(size, order), torch.empty_permuted(size, order)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
