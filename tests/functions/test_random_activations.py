"""The activations that draw random numbers: gumbel_softmax and rrelu in training follow
PyTorch's laws (same parameters, the frequencies and ranges PyTorch's draws give), and
their gradients are the ones PyTorch defines (straight-through for a hard sample, the
drawn slope for rrelu)."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.nn.functional as F

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

LOGITS = np.array([[1.0, 0.0, -1.0, 0.5]])


def test_gumbel_softmax_samples_follow_the_softmax_as_pytorchs():
    n = 20000
    ours = F.gumbel_softmax(lm.tensor(np.repeat(LOGITS, n, 0)), hard=True)
    theirs = torch.nn.functional.gumbel_softmax(torch.tensor(np.repeat(LOGITS, n, 0)), hard=True)
    want = np.exp(LOGITS[0]) / np.exp(LOGITS[0]).sum()
    for sample in (ours.numpy(), theirs.numpy()):
        assert set(np.unique(sample)) == {0.0, 1.0} and (sample.sum(1) == 1).all()
        np.testing.assert_allclose(sample.mean(0), want, atol=0.015)
    soft = F.gumbel_softmax(lm.tensor(LOGITS), tau=0.5).numpy()
    assert soft.min() > 0 and np.isclose(soft.sum(), 1.0)


def test_a_hard_sample_takes_the_soft_samples_gradient():
    w = np.array([[0.3, -1.0, 2.0, 0.5]])
    grads = []
    for hard in (False, True):
        x = lm.tensor(LOGITS, requires_grad=True)
        lm.manual_seed(7)  # the same noise for both
        (F.gumbel_softmax(x, tau=0.7, hard=hard) * lm.tensor(w)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)
    assert np.abs(grads[0]).max() > 0


def test_rrelu_in_training_draws_each_slope_from_its_range():
    lower, upper = 0.1, 0.3
    a = -np.abs(np.random.default_rng(0).standard_normal(20000)) - 0.1
    x = lm.tensor(a, requires_grad=True)
    y = F.rrelu(x, lower, upper, training=True)
    y.sum().backward()
    slopes = y.detach().numpy() / a
    assert lower <= slopes.min() and slopes.max() <= upper
    np.testing.assert_allclose(x.grad.numpy(), slopes, rtol=1e-12)  # d y / d x is the slope
    theirs = torch.nn.functional.rrelu(torch.tensor(a), lower, upper, training=True)
    their_slopes = theirs.numpy() / a
    assert abs(slopes.mean() - their_slopes.mean()) < 0.005
    assert abs(slopes.std() - their_slopes.std()) < 0.005
    positive = lm.tensor([1.0, 2.0])
    assert F.rrelu(positive, lower, upper, training=True).tolist() == [1.0, 2.0]
