"""nn.AdaptiveLogSoftmaxWithLoss against PyTorch's: the same parameters (names, shapes,
repr), and from the same weights the same outputs, loss, float64 gradients,
log-probabilities and predictions, batched and not; the same refusals."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((7, 8))
TARGET = np.array([0, 2, 3, 5, 6, 9, 4])  # the shortlist and both clusters


def _pair(**options):
    kwargs = {"cutoffs": [3, 6], "div_value": 2.0, **options}
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, **kwargs).double()
    ours = lm.nn.AdaptiveLogSoftmaxWithLoss(8, 10, **kwargs).to(lm.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


@pytest.mark.parametrize("head_bias", [False, True])
def test_outputs_loss_and_gradients_are_pytorchs(head_bias):
    ours, theirs = _pair(head_bias=head_bias)
    xl, xt = lm.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    a, b = ours(xl, lm.tensor(TARGET)), theirs(xt, torch.tensor(TARGET))
    np.testing.assert_allclose(a.output.detach().numpy(), b.output.detach().numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(a.loss.item(), b.loss.item(), rtol=1e-12)
    a.loss.backward(), b.loss.backward()
    np.testing.assert_allclose(xl.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-14)
    grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[name].grad.numpy(), rtol=1e-10,
                                   atol=1e-14, err_msg=name)


def test_log_prob_predict_and_one_sample_are_pytorchs():
    ours, theirs = _pair()
    np.testing.assert_allclose(ours.log_prob(lm.tensor(X)).detach().numpy(),
                               theirs.log_prob(torch.tensor(X)).detach().numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(lm.tensor(X)).numpy(),
                                  theirs.predict(torch.tensor(X)).numpy())
    a, b = ours(lm.tensor(X[0]), lm.tensor(8)), theirs(torch.tensor(X[0]), torch.tensor(8))
    assert tuple(a.output.shape) == tuple(b.output.shape) == ()
    np.testing.assert_allclose(a.output.item(), b.output.item(), rtol=1e-12)


@pytest.mark.parametrize("call, error", [
    (lambda lib, m: m(lib.tensor(X), lib.tensor([0, 1])), RuntimeError),
    (lambda lib, m: m(lib.tensor(X), lib.tensor(TARGET + 4)), RuntimeError),
    (lambda lib, m: m(lib.tensor(X[0]), lib.tensor([1])), RuntimeError),
    (lambda lib, m: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[6, 3]), ValueError),
    (lambda lib, m: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[3, 10]), ValueError)])
def test_what_pytorch_refuses_is_refused(call, error):
    ours, theirs = _pair()
    for lib, module in ((torch, theirs), (lm, ours)):
        with pytest.raises(error):
            call(lib, module.to(lib.float64) if lib is lm else module.double())
