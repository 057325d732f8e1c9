"""scatter's reduce argument with a tensor source, against PyTorch (which warns that the
argument is deprecated there, in favour of scatter_reduce)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lamina

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_with_reduce_and_a_tensor_source_is_pytorchs(reduce) -> None:
    rng = np.random.default_rng(0)
    x, src = rng.standard_normal((3, 4)), rng.standard_normal((3, 3))
    index = np.array([[0, 1, 1], [2, 0, 2], [3, 3, 3]])  # repeated: combined in turn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        theirs = torch.tensor(x).scatter(1, torch.tensor(index), torch.tensor(src),
                                         reduce=reduce)
    ours = lamina.tensor(x).scatter(1, lamina.tensor(index), lamina.tensor(src), reduce=reduce)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(RuntimeError, match="reduce argument must be either add or multiply"):
        lamina.tensor(x).scatter(1, lamina.tensor(index), lamina.tensor(src), reduce="max")
