"""HalfCauchy, Pareto, Weibull, InverseGamma, Kumaraswamy, NegativeBinomial and the relaxed
laws against PyTorch's: moments, entropy, log_prob, cdf and icdf on the same parameters;
their draws against their own cdf; rsample's gradients where the law has one."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.distributions as D

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
TD = torch.distributions

LAWS = [  # name, parameters, values in the support, what PyTorch's has
    ("HalfCauchy", ([0.7, 1.3],), [[0.1, 1.0], [5.0, 0.3]], "cdf icdf entropy"),
    ("Pareto", ([1.5, 0.5], [2.5, 0.7]), [[2.0, 3.0], [10.0, 0.6]], "mean variance cdf icdf entropy"),
    ("Weibull", ([1.5, 2.0], [2.5, 0.8]), [[0.3, 1.0], [4.0, 2.0]], "mean mode variance cdf icdf entropy"),
    ("InverseGamma", ([3.0, 1.5], [2.0, 0.4]), [[0.3, 1.0], [4.0, 2.0]], "mean mode variance cdf entropy"),
    ("Kumaraswamy", ([2.0, 0.7], [3.0, 1.5]), [[0.1, 0.5], [0.9, 0.2]], "mean variance entropy"),
]


def _pair(name, params):
    ours = getattr(D, name)(*[lm.tensor(np.array(p)) for p in params])
    theirs = getattr(TD, name)(*[torch.tensor(np.array(p)) for p in params],
                               validate_args=False)
    return ours, theirs


@pytest.mark.parametrize("name, params, values, checks", LAWS, ids=[law[0] for law in LAWS])
def test_a_law_is_pytorchs(name, params, values, checks) -> None:
    ours, theirs = _pair(name, params)
    for attr in checks.split():
        if attr in ("cdf", "icdf"):
            x = np.array(values) if attr == "cdf" else np.array([[0.1, 0.5], [0.9, 0.3]])
            want, got = getattr(theirs, attr)(torch.tensor(x)), getattr(ours, attr)(lm.tensor(x))
        else:
            want, got = getattr(theirs, attr), getattr(ours, attr)
            want, got = (want(), got()) if callable(want) else (want, got)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, err_msg=attr)
    np.testing.assert_allclose(ours.log_prob(lm.tensor(np.array(values))).numpy(),
                               theirs.log_prob(torch.tensor(np.array(values))).numpy(),
                               rtol=1e-10)


@pytest.mark.parametrize("name, params, values, checks", LAWS, ids=[law[0] for law in LAWS])
def test_draws_follow_the_law_and_rsample_differentiates(name, params, values, checks) -> None:
    lm.manual_seed(0)
    tensors = [lm.tensor(np.array(p), requires_grad=True) for p in params]
    law = getattr(D, name)(*tensors)
    draws = law.rsample((40000,))
    draws.sum().backward()
    assert all(t.grad is not None and np.isfinite(t.grad.numpy()).all() for t in tensors)
    if name == "InverseGamma":  # no icdf: the median by its cdf
        median = np.median(draws.detach().numpy(), 0)
        np.testing.assert_allclose(law.cdf(lm.tensor(median)).detach().numpy(), 0.5, atol=0.01)
    else:
        median = law.icdf(lm.tensor(np.full((2,), 0.5))).detach().numpy()
        np.testing.assert_allclose(np.median(draws.detach().numpy(), 0), median, rtol=0.03)


def test_negative_binomial_is_pytorchs() -> None:
    for kind, p in (("probs", [0.3, 0.7]), ("logits", [0.3, -1.7])):
        ours = D.NegativeBinomial(lm.tensor([3.0, 0.5]), **{kind: lm.tensor(p)})
        theirs = TD.NegativeBinomial(torch.tensor([3.0, 0.5]), **{kind: torch.tensor(p)})
        values = np.array([[0.0, 2.0], [5.0, 1.0]])
        for attr in ("mean", "mode", "variance"):
            np.testing.assert_allclose(getattr(ours, attr).numpy(),
                                       getattr(theirs, attr).numpy(), rtol=1e-6)
        np.testing.assert_allclose(ours.log_prob(lm.tensor(values)).numpy(),
                                   theirs.log_prob(torch.tensor(values)).numpy(), rtol=1e-6)
    lm.manual_seed(1)
    counts = D.NegativeBinomial(lm.tensor(3.0), probs=lm.tensor(0.4)).sample((40000,)).numpy()
    np.testing.assert_allclose(counts.mean(), 3 * 0.4 / 0.6, rtol=0.03)


def test_relaxed_laws_are_pytorchs_and_their_draws_differentiate() -> None:
    values = np.array([[0.1, 0.9], [0.5, 0.02]])
    for kind in ("probs", "logits"):
        p = [0.3, 0.7] if kind == "probs" else [0.3, -1.7]
        ours = D.RelaxedBernoulli(lm.tensor(0.4), **{kind: lm.tensor(p)})
        theirs = TD.RelaxedBernoulli(torch.tensor(0.4), **{kind: torch.tensor(p)})
        np.testing.assert_allclose(ours.log_prob(lm.tensor(values)).numpy(),
                                   theirs.log_prob(torch.tensor(values)).numpy(), rtol=1e-6)
    simplex = np.array([[0.1, 0.3, 0.6], [0.8, 0.15, 0.05]])
    ours = D.RelaxedOneHotCategorical(lm.tensor(0.6), probs=lm.tensor([0.2, 0.3, 0.5]))
    theirs = TD.RelaxedOneHotCategorical(torch.tensor(0.6), probs=torch.tensor([0.2, 0.3, 0.5]))
    np.testing.assert_allclose(ours.log_prob(lm.tensor(simplex)).numpy(),
                               theirs.log_prob(torch.tensor(simplex)).numpy(), rtol=1e-6)
    logits = lm.tensor([0.5, -0.5, 0.0], requires_grad=True)
    lm.manual_seed(2)
    soft = D.RelaxedOneHotCategorical(lm.tensor(0.1), logits=logits).rsample((20000,))
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0, rtol=1e-5)
    hard_share = (soft.detach().numpy().argmax(-1)[:, None] == np.arange(3)).mean(0)
    np.testing.assert_allclose(hard_share, np.exp([0.5, -0.5, 0]) / np.exp([0.5, -0.5, 0]).sum(),
                               atol=0.02)  # its argmax is a Categorical(logits) draw
    (soft[:, 0]).mean().backward()
    assert logits.grad.numpy()[0] > 0
    grads = []
    for lib, dists in ((lm, D), (torch, TD)):
        probs = lib.tensor([0.2, 0.8], requires_grad=True)
        draw = dists.OneHotCategoricalStraightThrough(probs=probs).rsample((5,))
        assert set(draw.detach().numpy().ravel()) <= {0.0, 1.0}
        draw[:, 1].sum().backward()  # through the normalised probabilities
        grads.append(probs.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_von_mises_is_pytorchs_and_draws_follow_it() -> None:
    loc, kappa = np.array([0.3, -2.0, 1.0]), np.array([0.5, 4.0, 60.0])
    ours = D.VonMises(lm.tensor(loc), lm.tensor(kappa))
    theirs = TD.VonMises(torch.tensor(loc), torch.tensor(kappa))
    values = np.array([[0.1, -2.5, 1.01], [3.0, 0.0, -1.0]])
    # PyTorch's I0 is a polynomial fit good to about 1e-7
    np.testing.assert_allclose(ours.log_prob(lm.tensor(values)).numpy(),
                               theirs.log_prob(torch.tensor(values)).numpy(), atol=1e-6)
    np.testing.assert_allclose(ours.variance.numpy(), theirs.variance.numpy(), atol=1e-6)
    lm.manual_seed(3)
    angles = ours.sample((40000,)).numpy()
    assert (np.abs(angles) <= np.pi).all()
    resultant = np.exp(1j * angles).mean(0)
    np.testing.assert_allclose(np.angle(resultant), loc, atol=0.03)
    np.testing.assert_allclose(np.abs(resultant), 1 - ours.variance.numpy(), atol=0.01)


def test_low_rank_multivariate_normal_is_pytorchs() -> None:
    W = np.array([[1.0, 0.5], [0.2, -0.3], [0.0, 1.0]])
    diag, loc = np.array([0.5, 1.0, 2.0]), np.array([0.1, -0.2, 0.3])
    ours = D.LowRankMultivariateNormal(lm.tensor(loc), lm.tensor(W), lm.tensor(diag))
    theirs = TD.LowRankMultivariateNormal(torch.tensor(loc), torch.tensor(W),
                                          torch.tensor(diag))
    x = np.array([[0.0, 1.0, -1.0], [2.0, 0.5, 0.1]])
    np.testing.assert_allclose(ours.log_prob(lm.tensor(x)).numpy(),
                               theirs.log_prob(torch.tensor(x)).numpy(), rtol=1e-12)
    for attr in ("variance", "covariance_matrix", "mean"):
        np.testing.assert_allclose(getattr(ours, attr).numpy(),
                                   getattr(theirs, attr).numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.entropy().numpy(), theirs.entropy().numpy(), rtol=1e-12)
    lm.manual_seed(4)
    draws = ours.rsample((40000,)).numpy()
    np.testing.assert_allclose(np.cov(draws.T), ours.covariance_matrix.numpy(), atol=0.06)
