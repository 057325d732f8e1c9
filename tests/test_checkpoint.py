"""utils.checkpoint: the outputs and gradients of an uncheckpointed run (and PyTorch's),
dropout's draws repeated in the recomputation, and the intermediates not kept."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import lamina as lm
import lamina.nn as nn
from lamina.utils.checkpoint import checkpoint, checkpoint_sequential

torch = pytest.importorskip("torch")


def _net(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.Tanh(), lib.nn.Linear(6, 6),
                            lib.nn.GELU(), lib.nn.Linear(6, 2))
    net = net.double() if lib is torch else net.to("float64")
    with lib.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(lib.tensor(np.linspace(-1, 1, p.numel()).reshape(tuple(p.shape)) * (i + 1)))
    return net


@pytest.mark.parametrize("segments", [1, 2, 3])
def test_checkpoint_sequential_gives_pytorchs_outputs_and_gradients(segments):
    x = np.random.default_rng(0).standard_normal((5, 4))
    results = []
    for lib, ckpt in ((torch, torch.utils.checkpoint.checkpoint_sequential),
                      (lm, checkpoint_sequential)):
        net = _net(lib)
        xin = lib.tensor(x, requires_grad=True)
        out = ckpt(net, segments, xin, use_reentrant=False)
        (out ** 2).sum().backward()
        results.append([out.detach().numpy(), xin.grad.numpy()]
                       + [p.grad.numpy() for p in net.parameters()])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_dropout_draws_the_same_mask_when_recomputed():
    net = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 1))
    x = lm.randn(6, 4, requires_grad=True)
    grads = []
    for wrapped in (True, False):
        lm.manual_seed(5)
        out = checkpoint(net, x, use_reentrant=False) if wrapped else net(x)
        out.sum().backward()
        grads.append([x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in net.parameters()])
        x.grad = None
        net.zero_grad()
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_the_intermediate_tensors_are_not_kept_until_backward():
    kept = []

    def block(x):
        h = x * 2
        kept.append(weakref.ref(h))
        return h.exp()

    x = lm.ones(3, requires_grad=True)
    out = checkpoint(block, x, use_reentrant=False)
    gc.collect()
    assert kept[0]() is None  # dropped after forward
    out.sum().backward()  # recomputed here
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2.0) * np.ones(3), rtol=1e-6)
    plain = block(x)
    gc.collect()
    assert kept[-1]() is not None and plain.requires_grad  # without: the graph holds it
