"""Out-of-range casts and a backward through inf or NaN: PyTorch's IEEE values, and no
NumPy warning (pytest's configuration makes any warning an error)."""

from __future__ import annotations

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.mark.parametrize("make", [
    lambda t: t.tensor([1e6, -1e6, 1.0]).half(),
    lambda t: t.tensor([1e6, 2.0]).to(t.float16),
    lambda t: t.tensor([1e300, 1.0], dtype=t.float64).float(),
    lambda t: t.tensor([1e6, 3.0], dtype=t.float16),
    lambda t: t.as_tensor([1e6], dtype=t.float16),
], ids=["half", "to", "float", "tensor", "as_tensor"])
def test_a_cast_out_of_range_is_inf_as_pytorch_s(make) -> None:
    ours, theirs = make(lamina), make(torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())


def test_nan_to_an_integer_and_an_out_of_range_fill_cast_without_a_warning() -> None:
    """(PyTorch refuses a fill out of float16's range on more than one element, and gives
    inf on one; lamina gives inf.)"""
    assert lamina.tensor([float("nan"), 2.0]).long()[1].item() == 2
    assert lamina.full((2,), 1e6, dtype=lamina.float16).tolist() == [np.inf, np.inf]
    assert lamina.zeros(2, dtype=lamina.float16).fill_(-1e6).tolist() == [-np.inf, -np.inf]


@pytest.mark.parametrize("loss", [
    lambda t, x: (x * 0).sqrt().sum(),  # 0 * inf: NaN
    lambda t, x: x.sqrt().sum(),  # 1 / (2 sqrt(0)): inf
    lambda t, x: (1 / x).sum(),  # -1 / 0 ** 2: -inf
    lambda t, x: (x * 1e30).pow(2).sum() * 0,  # overflow in backward only
    lambda t, x: t.log(x).sum(),
], ids=["zero times inf", "sqrt at 0", "reciprocal at 0", "overflow", "log at 0"])
def test_a_backward_through_inf_or_nan_gives_pytorch_s_gradient_quietly(loss) -> None:
    grads = []
    for t in (lamina, torch):
        x = t.tensor([0.0, 4.0], requires_grad=True)
        with np.errstate(all="ignore"):  # the forward's own warnings are not what is tested
            value = loss(t, x)
        value.backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)
