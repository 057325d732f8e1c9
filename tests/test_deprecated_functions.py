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
    assert "deprecated" in their_warning and "deprecated" in our_warning


# PyTorch warns once per process for these: the values are compared, lamina's warning
# is checked in a process of its own
FACTORIZATIONS = ["(lambda Q, R: Q @ R)(*A.qr())", "lib.qr(A).R",
                  "(A.mT @ A + lib.eye(3, dtype=A.dtype)).cholesky()",
                  "B.triangular_solve(S.triu() + 3 * lib.eye(3, dtype=A.dtype)).solution",
                  "B.triangular_solve(S + 3 * lib.eye(3, dtype=A.dtype), upper=False, "
                  "transpose=True).solution"]


@pytest.mark.filterwarnings("ignore:.*deprecated")
@pytest.mark.parametrize("call", FACTORIZATIONS)
def test_the_deprecated_factorization_names_give_pytorchs_values_and_gradients(call):
    rng = np.random.default_rng(0)
    arrays = {"A": rng.standard_normal((4, 3)), "S": rng.standard_normal((3, 3)),
              "B": rng.standard_normal((3, 2))}
    results = []
    for lib in (torch, lm):
        env = {k: lib.tensor(a, requires_grad=True) for k, a in arrays.items()}
        out = eval(call, {"lib": lib, **env})  # noqa: S307 - the test's own lines
        out.sum().backward()
        results.append([out.detach().numpy()] + [env[k].grad.numpy() for k in "ASB"
                                                 if env[k].grad is not None])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_a_deprecated_factorization_name_warns_once():
    code = ("import warnings, lamina as lm\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    a = lm.eye(2); a.qr(); a.qr(); a.cholesky()\n"
            "print(len(w), all('deprecated' in str(m.message) for m in w))")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["2", "True"]
