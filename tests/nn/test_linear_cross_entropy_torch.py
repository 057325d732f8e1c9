"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss against PyTorch 2.13's: the same
losses and float64 gradients for every option, the same module (names, repr, weights),
and the same refusals."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X, W, B = RNG.standard_normal((5, 3)), RNG.standard_normal((4, 3)), RNG.standard_normal(4)
Y = np.array([0, 3, 1, 2, 2])
W3, B3 = RNG.standard_normal((4, 2, 3)), RNG.standard_normal((4, 2))
Y3 = RNG.integers(0, 4, (5, 2))
P = RNG.dirichlet(np.ones(4), 5)

CASES = {
    "plain": (X, W, Y, {}),
    "bias": (X, W, Y, {"linear_bias": B}),
    "sum": (X, W, Y, {"linear_bias": B, "reduction": "sum"}),
    "none": (X, W, Y, {"reduction": "none"}),
    "class weights": (X, W, Y, {"weight": np.array([1.0, 2.0, 0.5, 1.5])}),
    "ignore": (X, W, np.array([0, -100, 1, 2, -100]), {"ignore_index": -100}),
    "ignore 3": (X, W, Y, {"ignore_index": 3}),
    "smoothing": (X, W, Y, {"label_smoothing": 0.2, "linear_bias": B}),
    "probabilities": (X, W, P, {"linear_bias": B}),
    "unbatched": (X[0], W, np.array(2), {"linear_bias": B}),
    "K-dimensional": (X, W3, Y3, {"linear_bias": B3}),
}


@pytest.mark.parametrize("case", CASES)
def test_the_loss_and_gradients_are_pytorchs(case):
    x, w, y, options = CASES[case]
    grads, losses = [], []
    for lib in (torch, lm):
        xs, ws = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        kw = {k: (lib.tensor(v, requires_grad=k == "linear_bias") if isinstance(v, np.ndarray)
                  else v) for k, v in options.items()}
        loss = lib.nn.functional.linear_cross_entropy(xs, ws, lib.tensor(y), **kw)
        loss.sum().backward()
        losses.append(loss.detach().numpy())
        grads.append([xs.grad.numpy(), ws.grad.numpy()]
                     + ([kw["linear_bias"].grad.numpy()] if "linear_bias" in kw else []))
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-12)
    for a, b in zip(grads[1], grads[0]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("bias", [False, True])
def test_the_module_is_pytorchs(bias):
    theirs = torch.nn.LinearCrossEntropyLoss(3, 4, out_features=(2,), bias=bias,
                                             label_smoothing=0.1).double()
    ours = lm.nn.LinearCrossEntropyLoss(3, 4, out_features=(2,), bias=bias,
                                        label_smoothing=0.1).to(lm.float64)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    a, b = ours(lm.tensor(X), lm.tensor(Y3)), theirs(torch.tensor(X), torch.tensor(Y3))
    np.testing.assert_allclose(a.item(), b.item(), rtol=1e-12)
    a.backward(), b.backward()
    np.testing.assert_allclose(ours.linear.weight.grad.numpy(),
                               theirs.linear.weight.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(4, 5),
                                                       lib.tensor([0, 1])),
    lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 2, 3), lib.ones(4, 3),
                                                       lib.tensor([0, 1])),
    lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(4, 3),
                                                       lib.tensor([0, 1]),
                                                       linear_bias=lib.ones(3)),
    lambda lib: lib.nn.functional.linear_cross_entropy(lib.ones(2, 3), lib.ones(4, 3),
                                                       lib.ones(2, 4), ignore_index=0),
    lambda lib: lib.nn.LinearCrossEntropyLoss(3, 4, weight=lib.ones(3)),
    lambda lib: lib.nn.LinearCrossEntropyLoss(3, 4, label_smoothing=1.5)])
def test_what_pytorch_refuses_is_refused(call):
    for lib in (torch, lm):
        with pytest.raises(RuntimeError):
            call(lib)


def test_chunking_options_are_accepted_and_change_no_value():
    options = lm.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    a = lm.nn.functional.linear_cross_entropy(lm.tensor(X), lm.tensor(W), lm.tensor(Y),
                                              options=options)
    b = lm.nn.functional.linear_cross_entropy(lm.tensor(X), lm.tensor(W), lm.tensor(Y))
    assert a.item() == b.item()
