"""PyTorch's deprecated top-level functions: the same values, and the same warning."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("call", ["range(1, 4)", "range(0, 1, 0.25)", "range(-1, 1, 0.5)",
                                  "chain_matmul(lib.ones(2, 3), lib.ones(3, 4), lib.eye(4))"])
def test_a_deprecated_function_warns_and_gives_pytorchs_values(call):
    results = []
    for lib in (torch, lm):
        with pytest.warns(UserWarning, match="deprecated") as caught:
            results.append(eval(f"lib.{call}", {"lib": lib}))  # noqa: S307 - the test's own
        results.append(str(caught[0].message))
    theirs, their_warning, ours, our_warning = results
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    assert their_warning.startswith(our_warning)  # theirs adds where in C++ it was raised
