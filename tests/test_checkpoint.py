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


def _penalty(lib, checkpointed, use_reentrant=False):
    """A WGAN-GP style gradient penalty through a (checkpointed) network: the input's
    gradient taken with create_graph, its norm's distance to 1 differentiated again."""
    net = _net(lib)
    x = lib.tensor(np.random.default_rng(1).standard_normal((5, 4)), requires_grad=True)
    lib_ckpt = torch.utils.checkpoint.checkpoint if lib is torch else checkpoint
    out = lib_ckpt(net, x, use_reentrant=use_reentrant) if checkpointed else net(x)
    (g,) = lib.autograd.grad(out.sum(), x, create_graph=True)
    penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
    penalty.backward()
    # The last bias does not reach the input's gradient: None, in both frameworks.
    return [penalty.detach().numpy(), x.grad.numpy()] + [
        np.full(1, np.nan) if p.grad is None else p.grad.numpy() for p in net.parameters()]


def test_a_gradient_penalty_through_a_checkpoint_is_pytorchs():
    """use_reentrant=False: the gradient taken with create_graph is differentiable again,
    into the input and the parameters the function reads; as PyTorch's, and as without
    the checkpoint."""
    theirs = _penalty(torch, True)
    for ours in (_penalty(lm, True), _penalty(lm, False)):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_autograd_grad_reaches_the_parameters_and_outer_tensors_a_checkpoint_reads():
    """autograd.grad with respect to a parameter inside, and a tensor the function reads
    from outside (not an argument) whose input also feeds the loss directly."""
    results = []
    for lib, ckpt in ((torch, torch.utils.checkpoint.checkpoint), (lm, checkpoint)):
        net = _net(lib)
        x = lib.tensor(np.linspace(-1, 1, 20).reshape(5, 4), requires_grad=True)
        w = lib.tensor(np.linspace(0.5, 2, 4), requires_grad=True)
        scale = w * 3  # made outside the function, read inside it

        def block(t, net=net, scale=scale):
            return net(t * scale), t.sum()
        out, total = ckpt(block, x, use_reentrant=False)
        loss = (out ** 2).sum() + total + scale.sum()
        results.append([g.numpy() for g in lib.autograd.grad(
            loss, [x, w, net[0].weight, net[4].bias])])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_outputs_keep_their_structure_and_the_random_stream_goes_on():
    x = lm.ones(3, requires_grad=True)
    (one,) = checkpoint(lambda t: (t * 2,), x, use_reentrant=False)
    assert isinstance(one, lm.Tensor) and one.requires_grad
    drop = nn.Dropout(0.5)
    for wrapped in (True, False):  # the draw after a checkpointed dropout: as after a plain one
        lm.manual_seed(3)
        (checkpoint(drop, x, use_reentrant=False) if wrapped else drop(x)).sum().backward()
        after = lm.rand(4).numpy()
        if wrapped:
            first = after
    np.testing.assert_array_equal(first, after)
