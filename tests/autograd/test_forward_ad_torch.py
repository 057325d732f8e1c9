"""autograd.forward_ad and func.linearize against PyTorch's: the same tangents for the
same functions and tangents, and the same errors."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")
# PyTorch's forward mode loads TorchScript, and torch.func.linearize traces with torch.fx:
# both warn about themselves
pytestmark = [pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated"),
              pytest.mark.filterwarnings("ignore:Attempted to insert a get_attr Node")]

RNG = np.random.default_rng(0)
X, T, W = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))
FUNCTIONS = {
    "softmax of a product": lambda lib, x, w: lib.nn.functional.softmax(x @ w, dim=1).log()
    * x.sum(1, keepdim=True),
    "layer norm and gelu": lambda lib, x, w: lib.nn.functional.gelu(
        lib.nn.functional.layer_norm(x, (4,))) @ w,
    "conv": lambda lib, x, w: lib.nn.functional.conv1d(x.unsqueeze(0), w.T.unsqueeze(2).repeat(
        1, 1, 3)[:, :3], padding=1).tanh(),
    "elementwise": lambda lib, x, w: (x.exp() - x.sin() * x.cos()) / (1 + x * x),
}


def _tangents(lib, name):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(lib.tensor(X), lib.tensor(T))
        w = fw.make_dual(lib.tensor(W), lib.tensor(np.ones_like(W)))
        y = FUNCTIONS[name](lib, x, w)
        inside = fw.unpack_dual(y)
        mine = fw.unpack_dual(x).tangent
        plain = fw.unpack_dual(lib.tensor(X)).tangent
    after = fw.unpack_dual(y).tangent
    return inside, mine, plain, after


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_unpack_dual_gives_pytorchs_tangents(name):
    ours, theirs = _tangents(lm, name), _tangents(torch, name)
    np.testing.assert_allclose(ours[0].primal.numpy(), theirs[0].primal.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours[0].tangent.numpy(), theirs[0].tangent.numpy(),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours[1].numpy(), theirs[1].numpy())
    assert ours[2] is None and theirs[2] is None  # no dual: no tangent
    assert ours[3] is None and theirs[3] is None  # the level closed: no tangent


def test_forward_ad_refuses_what_pytorch_refuses():
    for lib in (torch, lm):
        fw = lib.autograd.forward_ad
        with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
            fw.make_dual(lib.ones(2), lib.ones(2))
        size = r"Tensor is of size \[2\] while the given forward gradient is of size \[3\]"
        with fw.dual_level(), pytest.raises(RuntimeError, match=size):
            fw.make_dual(lib.ones(2), lib.ones(3))


def test_linearize_gives_pytorchs_jvps():
    results = []
    for lib in (torch, lm):
        out, jvp_fn = lib.func.linearize(lambda x, w, lib=lib: FUNCTIONS["softmax of a product"](
            lib, x, w), lib.tensor(X), lib.tensor(W))
        results.append([out, jvp_fn(lib.tensor(T), lib.tensor(np.ones_like(W))),
                        jvp_fn(lib.tensor(-T), lib.tensor(W))])
    for a, b in zip(*results):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
