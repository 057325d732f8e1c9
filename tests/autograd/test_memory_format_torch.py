"""Memory formats as PyTorch's: the names, which order `contiguous`, `clone` and `to` lay
a copy out in (strides compared), what `is_contiguous` answers, the errors, and that the
values and gradients do not change."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def _pair(shape, transpose=None):
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    ours, theirs = lm.tensor(a), torch.tensor(a)
    if transpose:
        ours, theirs = ours.permute(*transpose), theirs.permute(*transpose)
    return ours, theirs


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape, transpose", [((2, 3, 4, 5), None), ((2, 3, 4, 5, 2), None),
                                              ((2, 4, 5, 3), (0, 3, 1, 2)), ((3, 4), None)])
def test_contiguous_clone_to_and_is_contiguous_as_pytorch(fmt, shape, transpose):
    ours, theirs = _pair(shape, transpose)
    mine, their = getattr(lm, fmt), getattr(torch, fmt)
    assert repr(mine) == repr(their).replace("torch", "lamina")
    assert ours.is_contiguous(memory_format=mine) == theirs.is_contiguous(memory_format=their)
    for method in ("contiguous", "clone", "to"):
        try:
            want = getattr(theirs, method)(memory_format=their)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=str(e)):
                getattr(ours, method)(memory_format=mine)
            continue
        got = getattr(ours, method)(memory_format=mine)
        assert got.stride() == want.stride(), method
        assert (got is ours) == (want is theirs), method  # a copy only where one is needed
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_channels_last_copies_pass_gradients_back():
    x = lm.randn(2, 3, 4, 5, requires_grad=True)
    y = x.contiguous(memory_format=lm.channels_last) * lm.arange(5.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(np.arange(5.0), x.shape))
    assert y.is_contiguous(memory_format=lm.channels_last)


def test_a_format_that_is_not_one_is_named():
    with pytest.raises(TypeError, match="memory_format must be a lamina.memory_format"):
        lm.zeros(1, 2, 3, 4).contiguous(memory_format="channels_last")
