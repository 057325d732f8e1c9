"""lamina.distributions against torch.distributions: the same parameters give the same
log-probabilities, entropies, moments, CDFs and KL divergences, with the same gradients
(float64), and draws follow the same laws with the same shapes and dtypes."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm
import lamina.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions
pytestmark = pytest.mark.torch

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((3, 4))
PROBS = RNG.uniform(0.05, 1.0, (3, 4))
LOC, SCALE = RNG.standard_normal((2, 3)), RNG.uniform(0.5, 2.0, (2, 3))
P01 = RNG.uniform(0.05, 0.95, (5,))

A3 = RNG.standard_normal((3, 3))
SPD = A3 @ A3.T + np.eye(3)
POS = RNG.uniform(0.5, 3.0, (2, 3))
SIMPLEX = RNG.uniform(0.1, 1.0, (2, 3))
SIMPLEX /= SIMPLEX.sum(-1, keepdims=True)
ONE_HOT = np.eye(4)[[1, 3, 0]]
P_HIGH = RNG.uniform(0.4, 0.9, (2, 3))
COUNTS = np.array([[2.0, 0, 1, 2], [0, 0, 5, 0], [1, 1, 1, 2]])  # 5 draws of 4 categories
# the distributions whose cdf both libraries have
CDF = {"normal", "normal_broadcast", "uniform", "exponential", "laplace", "cauchy", "gumbel",
       "halfnormal", "lognormal", "mixture"}

# name, builder(lib, *params), parameter arrays, a value to score
CASES = [
    ("normal", lambda d, a, b: d.Normal(a, b), (LOC, SCALE), RNG.standard_normal((2, 3))),
    ("normal_broadcast", lambda d, a, b: d.Normal(a, b), (LOC[0], SCALE[:, :1]),
     RNG.standard_normal((2, 3))),
    ("uniform", lambda d, a, b: d.Uniform(a, b), (LOC, LOC + SCALE), LOC + 0.3 * SCALE),
    ("categorical_logits", lambda d, a: d.Categorical(logits=a), (LOGITS,),
     np.array([0, 3, 1])),
    ("categorical_probs", lambda d, a: d.Categorical(probs=a), (PROBS,), np.array([2, 0, 3])),
    ("bernoulli_probs", lambda d, a: d.Bernoulli(probs=a), (P01,),
     np.array([1.0, 0.0, 1.0, 1.0, 0.0])),
    ("bernoulli_logits", lambda d, a: d.Bernoulli(logits=a), (LOGITS[0],),
     np.array([1.0, 0.0, 0.0, 1.0])),
    ("exponential", lambda d, a: d.Exponential(a), (SCALE,), POS),
    ("laplace", lambda d, a, b: d.Laplace(a, b), (LOC, SCALE), RNG.standard_normal((2, 3))),
    ("cauchy", lambda d, a, b: d.Cauchy(a, b), (LOC, SCALE), RNG.standard_normal((2, 3))),
    ("gumbel", lambda d, a, b: d.Gumbel(a, b), (LOC, SCALE), RNG.standard_normal((2, 3))),
    ("halfnormal", lambda d, a: d.HalfNormal(a), (SCALE,), POS),
    ("lognormal", lambda d, a, b: d.LogNormal(a, b), (LOC * 0.2, SCALE * 0.2), POS),
    ("gamma", lambda d, a, b: d.Gamma(a, b), (SCALE * 2, SCALE[::-1].copy()), POS),
    ("beta", lambda d, a, b: d.Beta(a, b), (SCALE * 2, SCALE[::-1].copy() * 2), SIMPLEX),
    ("dirichlet", lambda d, a: d.Dirichlet(a), (SCALE * 2,), SIMPLEX),
    ("poisson", lambda d, a: d.Poisson(a), (SCALE,), np.array([[0.0, 1, 2], [3, 0, 1]])),
    ("mvn_covariance", lambda d, a, c: d.MultivariateNormal(a, covariance_matrix=c),
     (LOC, SPD), RNG.standard_normal((2, 3))),
    ("mvn_scale_tril", lambda d, a, c: d.MultivariateNormal(a, scale_tril=c),
     (LOC, np.linalg.cholesky(SPD)), RNG.standard_normal((2, 3))),
    ("mvn_precision", lambda d, a, c: d.MultivariateNormal(a, precision_matrix=c),
     (LOC[0], SPD), RNG.standard_normal(3)),
    ("independent", lambda d, a, b: d.Independent(d.Normal(a, b), 1), (LOC, SCALE),
     RNG.standard_normal((2, 3))),
    ("onehot", lambda d, a: d.OneHotCategorical(logits=a), (LOGITS,), ONE_HOT),
    ("geometric_probs", lambda d, a: d.Geometric(probs=a), (P_HIGH,),
     np.array([[0.0, 1, 3], [2, 0, 5]])),
    ("geometric_logits", lambda d, a: d.Geometric(logits=a), (LOGITS[0] * 0.3 + 1,),
     np.array([0.0, 1, 2, 4])),
    ("binomial", lambda d, a: d.Binomial(10, probs=a), (P01,), np.array([0.0, 3, 10, 5, 7])),
    ("binomial_logits", lambda d, a: d.Binomial(6, logits=a), (LOGITS,),
     np.array([[0.0, 1, 6, 3]] * 3)),
    ("multinomial", lambda d, a: d.Multinomial(5, probs=a), (PROBS,), COUNTS),
    ("multinomial_logits", lambda d, a: d.Multinomial(5, logits=a), (LOGITS,), COUNTS),
    ("studentt", lambda d, a, b, c: d.StudentT(a, b, c), (POS * 3 + 3, LOC, SCALE),
     RNG.standard_normal((2, 3))),
    ("chi2", lambda d, a: d.Chi2(a), (POS * 2 + 1,), POS),
    ("mixture", lambda d, a, b, c: d.MixtureSameFamily(d.Categorical(probs=a),
                                                        d.Normal(b, c)),
     (SIMPLEX, LOC, SCALE), RNG.standard_normal(2)),
]


def _pair(build, params):
    ours = [lm.tensor(p, requires_grad=True) for p in params]
    theirs = [torch.tensor(p, requires_grad=True) for p in params]
    return build(D, *ours), ours, build(TD, *theirs), theirs


def _has(d, what):
    """Whether the distribution has `what` (PyTorch's base raises for a missing mode)."""
    try:
        getattr(d, what)
    except (AttributeError, NotImplementedError):
        return False
    return True


def _same(a, b, what):
    # atol 1e-9: PyTorch's float64 trigamma is good to about 1e-9 (lamina/functions/gamma.py)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9,
                               atol=1e-9, err_msg=what)


def _same_grads(ours, theirs, what):
    for a, b in zip(ours, theirs):
        ga = np.zeros(a.shape) if a.grad is None else a.grad.numpy()
        gb = np.zeros(tuple(b.shape)) if b.grad is None else b.grad.numpy()
        np.testing.assert_allclose(ga, gb, rtol=1e-9, atol=1e-9, err_msg=what)
        a.grad, b.grad = None, None


@pytest.mark.parametrize("name, build, params, value", CASES, ids=[c[0] for c in CASES])
def test_scores_and_moments_match_pytorch_with_gradients(name, build, params, value):
    ours, ov, theirs, tv = _pair(build, params)  # afresh for each quantity below: a
    # second backward through lamina's broadcast of the parameters raises (see the guide)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert type(ours).__name__ in repr(ours)
    w = RNG.standard_normal(tuple(theirs.batch_shape))
    for what in ("log_prob", "entropy", "cdf", "mean", "variance", "stddev", "probs",
                 "logits", "mode"):
        if not _has(theirs, what) or (what == "cdf" and name not in CDF):
            continue
        ours, ov, theirs, tv = _pair(build, params)
        if what in ("log_prob", "cdf"):
            a, b = getattr(ours, what)(lm.tensor(value)), getattr(theirs, what)(
                torch.tensor(value))
        else:
            a, b = getattr(ours, what), getattr(theirs, what)
            if callable(b):
                try:
                    b = b()
                except NotImplementedError:  # PyTorch has none: nor has lamina
                    with pytest.raises(NotImplementedError):
                        a()
                    continue
                a = a()
        assert tuple(a.shape) == tuple(b.shape), what
        if not b.is_floating_point() or np.isnan(b.detach().numpy()).any():
            assert np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True), what
            continue
        if name.startswith("multinomial") and what == "entropy":
            # PyTorch takes lgamma(total_count + 1) of an int tensor, in float32
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), atol=1e-7)
        else:
            _same(a, b, what)
        if b.requires_grad:
            weights = w if b.shape == w.shape else RNG.standard_normal(tuple(b.shape))
            (a * lm.tensor(weights)).sum().backward()
            (b * torch.tensor(weights)).sum().backward()
            _same_grads(ov, tv, what)


@pytest.mark.parametrize("name, build, params, value", CASES, ids=[c[0] for c in CASES])
def test_draws_have_pytorchs_shapes_dtypes_and_law(name, build, params, value):
    ours, _, theirs, _ = _pair(build, params)
    for shape in ((), (7,), (2, 5)):
        a, b = ours.sample(shape), theirs.sample(shape)
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype).split(".")[1]
        assert not a.requires_grad
    lm.manual_seed(0)
    draws = ours.sample((20000,)).numpy()
    mean = theirs.mean.detach().numpy()
    if name == "cauchy":  # no mean nor spread to compare: the median and quartiles
        np.testing.assert_allclose(np.median(draws, 0), LOC, atol=0.06 * SCALE.max())
        return
    if "categorical" in name:  # the frequency of each category against its probability
        freq = np.stack([(draws == k).mean(0) for k in range(params[0].shape[-1])], -1)
        np.testing.assert_allclose(freq, theirs.probs.detach().numpy(), atol=0.02)
    else:
        np.testing.assert_allclose(draws.mean(0), mean, atol=0.06)
        np.testing.assert_allclose(draws.std(0), theirs.stddev.detach().numpy(), rtol=0.05)


@pytest.mark.parametrize("kind", ["Normal", "Uniform"])
def test_rsample_carries_the_gradient_to_the_parameters(kind):
    a, b = lm.tensor(LOC, requires_grad=True), lm.tensor(SCALE, requires_grad=True)
    d = getattr(D, kind)(a, a + b if kind == "Uniform" else b)
    assert d.has_rsample and d.rsample((3,)).requires_grad
    lm.manual_seed(1)
    x = d.rsample((4000,))
    x.mean().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full(LOC.shape, 1 / LOC.size), rtol=1e-6)
    # d x / d scale (or d high) is the draw's noise: E = 0 (Normal), 1/2 (Uniform's u)
    expected = (0.0 if kind == "Normal" else 0.5) / LOC.size
    np.testing.assert_allclose(b.grad.numpy(), expected, atol=0.1 / LOC.size)


KL = [(lambda d: (d.Normal(lm_or(d, LOC), lm_or(d, SCALE)),
                  d.Normal(lm_or(d, LOC[::-1].copy()), lm_or(d, SCALE[::-1].copy())))),
      (lambda d: (d.Categorical(logits=lm_or(d, LOGITS)),
                  d.Categorical(probs=lm_or(d, PROBS)))),
      (lambda d: (d.Bernoulli(probs=lm_or(d, P01)),
                  d.Bernoulli(logits=lm_or(d, LOGITS[0, :1] + P01)))),
      (lambda d: (d.Uniform(lm_or(d, LOC), lm_or(d, LOC + SCALE)),
                  d.Uniform(lm_or(d, LOC - 1), lm_or(d, LOC + 3 * SCALE)))),
      (lambda d: (d.Exponential(lm_or(d, SCALE)), d.Exponential(lm_or(d, POS)))),
      (lambda d: (d.Laplace(lm_or(d, LOC), lm_or(d, SCALE)),
                  d.Laplace(lm_or(d, POS), lm_or(d, POS)))),
      (lambda d: (d.Gamma(lm_or(d, SCALE), lm_or(d, POS)), d.Gamma(lm_or(d, POS),
                                                                  lm_or(d, SCALE)))),
      (lambda d: (d.Beta(lm_or(d, SCALE), lm_or(d, POS)), d.Beta(lm_or(d, POS),
                                                                lm_or(d, SCALE)))),
      (lambda d: (d.Dirichlet(lm_or(d, SCALE)), d.Dirichlet(lm_or(d, POS)))),
      (lambda d: (d.Poisson(lm_or(d, SCALE)), d.Poisson(lm_or(d, POS)))),
      (lambda d: (d.MultivariateNormal(lm_or(d, LOC), lm_or(d, SPD)),
                  d.MultivariateNormal(lm_or(d, POS), scale_tril=lm_or(d, np.eye(3) * 2)))),
      (lambda d: (d.Independent(d.Normal(lm_or(d, LOC), lm_or(d, SCALE)), 2),
                  d.Independent(d.Normal(lm_or(d, POS), lm_or(d, POS)), 2))),
      (lambda d: (d.OneHotCategorical(logits=lm_or(d, LOGITS)),
                  d.OneHotCategorical(probs=lm_or(d, PROBS))))]
KL_NAMES = ["normal", "categorical", "bernoulli", "uniform", "exponential", "laplace", "gamma",
            "beta", "dirichlet", "poisson", "mvn", "independent", "onehot"]


def lm_or(d, a):
    return (lm if d is D else torch).tensor(a)


@pytest.mark.parametrize("pair", KL, ids=KL_NAMES)
def test_kl_divergence_matches_pytorch(pair):
    (p, q), (tp, tq) = pair(D), pair(TD)
    _same(D.kl_divergence(p, q), TD.kl_divergence(tp, tq), "kl")


def test_gradients_match_central_differences():
    loc, scale = lm.tensor(LOC), lm.tensor(SCALE)
    assert lm.gradcheck(lambda m, s: D.Normal(m, s).log_prob(lm.tensor(LOC[::-1].copy())),
                        [loc, scale])
    assert lm.gradcheck(lambda z: D.Categorical(logits=z).entropy(), [lm.tensor(LOGITS)])
    assert lm.gradcheck(lambda z: D.Categorical(logits=z).log_prob(lm.tensor([0, 3, 1])),
                        [lm.tensor(LOGITS)])
    assert lm.gradcheck(lambda m, s: D.kl_divergence(D.Normal(m, s), D.Normal(0.0, 1.0)),
                        [loc, scale])


def test_bad_parameters_and_values_raise_value_error_as_pytorchs():
    for lib in (D, TD):
        t = lm.tensor if lib is D else torch.tensor
        with pytest.raises(ValueError):
            lib.Normal(t(0.0), t(-1.0))
        with pytest.raises(ValueError):
            lib.Categorical(logits=t([0.0, 1.0])).log_prob(t(2))
        with pytest.raises(ValueError):
            lib.Bernoulli(probs=t([1.5]))
        with pytest.raises(ValueError):
            lib.Categorical(probs=t([0.5, 0.5]), logits=t([0.0, 0.0]))
    assert D.Normal(0.0, -1.0, validate_args=False).scale.item() == -1.0
    with pytest.raises(NotImplementedError, match="register_kl"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Bernoulli(probs=lm.tensor(0.5)))


def test_a_policy_gradient_step_matches_pytorch():
    """REINFORCE, as PyTorch's examples write it: log_prob of the chosen actions times the
    returns, through a softmax policy."""
    x = RNG.standard_normal((6, 4))
    W = RNG.standard_normal((4, 3)) * 0.5
    actions, returns = np.array([0, 2, 1, 1, 0, 2]), RNG.standard_normal(6)
    grads = []
    for lib, dists in ((lm, D), (torch, TD)):
        w = lib.tensor(W, requires_grad=True)
        policy = dists.Categorical(logits=lib.tensor(x) @ w)
        loss = -(policy.log_prob(lib.tensor(actions)) * lib.tensor(returns)).sum()
        loss = loss - 0.01 * policy.entropy().mean()
        loss.backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-12)


def test_studentt_rsample_carries_gradients_to_loc_scale_and_df():
    df = lm.tensor(POS * 3 + 3, requires_grad=True)
    loc, scale = lm.tensor(LOC, requires_grad=True), lm.tensor(SCALE, requires_grad=True)
    lm.manual_seed(2)
    draws = D.StudentT(df, loc, scale).rsample((4000,))
    draws.mean().backward()
    np.testing.assert_allclose(loc.grad.numpy(), np.full(LOC.shape, 1 / LOC.size), rtol=1e-6)
    assert np.abs(scale.grad.numpy()).max() < 0.1 / LOC.size  # E[t] = 0
    assert df.grad is not None and np.abs(df.grad.numpy()).max() < 0.1 / LOC.size


def test_counts_draws_hold_their_totals():
    lm.manual_seed(3)
    counts = D.Multinomial(7, probs=lm.tensor(PROBS)).sample((50,)).numpy()
    assert counts.shape == (50, 3, 4) and (counts.sum(-1) == 7).all()
    assert set(np.unique(D.Binomial(3, probs=lm.tensor(P01)).sample((50,)).numpy())) <= {
        0, 1, 2, 3}
    mix = D.MixtureSameFamily(D.Categorical(probs=lm.tensor(SIMPLEX)),
                              D.MultivariateNormal(lm.zeros(2, 3, 2), lm.eye(2)))
    assert tuple(mix.sample((5,)).shape) == (5, 2, 2) and tuple(mix.event_shape) == (2,)
