"""The rest of torch.distributions against PyTorch's: ContinuousBernoulli, FisherSnedecor,
GeneralizedPareto, LogisticNormal and the logit-space relaxed laws (moments, log_prob,
cdf, icdf, entropy, draws and their gradients); the structured transforms (values,
inverses, log-Jacobians and gradients); biject_to / transform_to onto every constraint
PyTorch registers; the matrix and piecewise constraints; each law's support and
arg_constraints; ExponentialFamily's entropy; and PyTorch's module paths."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import lamina as lm
import lamina.distributions as D

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
TD = torch.distributions
RNG = np.random.default_rng(17)

LAWS = [  # name, (args, kwargs) built in both libraries, values, what to compare
    ("ContinuousBernoulli", ((), {"probs": [0.2, 0.5, 0.9, 0.4995]}), [0.1, 0.5, 0.95, 0.3],
     "mean variance entropy cdf icdf"),
    ("ContinuousBernoulli", ((), {"logits": [-1.0, 0.0, 2.0]}), [0.1, 0.5, 0.95],
     "mean variance entropy cdf icdf"),
    ("FisherSnedecor", (([4.0, 1.5, 8.0], [6.0, 3.0, 12.0]), {}), [1.0, 0.3, 2.5],
     "mean variance mode"),
    # PyTorch's GeneralizedPareto compares the concentration to a float32 zero: float32 here
    ("GeneralizedPareto", (([0.0, 1.0, -1.0], [1.0, 2.0, 0.5], [0.5, 0.0, -0.3]), {}),
     [1.0, 2.0, -0.5], "mean variance mode entropy cdf icdf float32"),
    ("LogisticNormal", (([0.3, -0.2], [1.0, 0.5]), {}), [0.2, 0.3, 0.5], ""),
    ("LogitRelaxedBernoulli", (([0.5],), {"probs": [0.3, 0.8]}), [0.0, 1.2], ""),
    ("ExpRelaxedCategorical", (([0.7],), {"logits": [0.1, -0.5, 1.0]}),
     list(np.log([0.2, 0.3, 0.5])), ""),
]


def _law(lib, name):
    """The class: some of PyTorch's are only in their module (relaxed_bernoulli, ...)."""
    paths = {"LogitRelaxedBernoulli": "relaxed_bernoulli",
             "ExpRelaxedCategorical": "relaxed_categorical"}
    where = lib.distributions if name not in paths else getattr(lib.distributions, paths[name])
    return getattr(where, name)


def _make(lib, name, spec, dtype=np.float64):
    args, kwargs = spec
    def convert(v):
        return lib.tensor(np.array(v, dtype))

    return _law(lib, name)(*map(convert, args), **{k: convert(v) for k, v in kwargs.items()})


@pytest.mark.parametrize("name, spec, values, checks", LAWS,
                         ids=[f"{law[0]}-{i}" for i, law in enumerate(LAWS)])
def test_a_law_is_pytorchs(name, spec, values, checks) -> None:
    dtype, tol = (np.float32, 1e-5) if "float32" in checks else (np.float64, 1e-9)
    ours, theirs = _make(lm, name, spec, dtype), _make(torch, name, spec, dtype)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    x = np.array(values, dtype)
    np.testing.assert_allclose(ours.log_prob(lm.tensor(x)).numpy(),
                               theirs.log_prob(torch.tensor(x)).numpy(), rtol=tol)
    for attr in checks.replace("float32", "").split():
        if attr in ("cdf", "icdf"):
            v = x if attr == "cdf" else np.array([0.1, 0.6, 0.9, 0.4][:len(x)], dtype)
            want, got = getattr(theirs, attr)(torch.tensor(v)), getattr(ours, attr)(lm.tensor(v))
        else:
            want, got = getattr(theirs, attr), getattr(ours, attr)
            want, got = (want(), got()) if callable(want) else (want, got)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol * 1e-3,
                                   err_msg=attr)


@pytest.mark.parametrize("name, spec, values, checks", LAWS,
                         ids=[f"{law[0]}-{i}" for i, law in enumerate(LAWS)])
def test_draws_lie_in_the_support_and_rsample_differentiates(name, spec, values, checks):
    lm.manual_seed(0)
    args, kwargs = spec
    tensors = [lm.tensor(np.array(v, np.float64), requires_grad=True) for v in args]
    named = {k: lm.tensor(np.array(v, np.float64), requires_grad=True)
             for k, v in kwargs.items()}
    law = _law(lm, name)(*tensors, **named)
    draws = law.rsample((2000,))
    assert law.support.check(draws).numpy().all()
    draws.sum().backward()
    for t in [*tensors, *named.values()]:
        assert t.grad is not None and np.isfinite(t.grad.numpy()).all()
    if name in ("FisherSnedecor", "GeneralizedPareto", "ContinuousBernoulli"):
        # the draws' median where the cdf says it is
        median = np.median(law.sample((20000,)).numpy(), 0)
        if name == "FisherSnedecor":
            cdf = TD.FisherSnedecor(*[torch.tensor(np.array(a)) for a in args])
            probe = torch.tensor(median)
            x = torch.linspace(1e-3, 30, 200001, dtype=torch.float64)[:, None]
            density = cdf.log_prob(x).exp()
            mass = (density * (x <= probe)).sum(0) * (x[1] - x[0])
            np.testing.assert_allclose(mass.numpy(), 0.5, atol=0.02)
        else:
            np.testing.assert_allclose(law.cdf(lm.tensor(median)).detach().numpy(), 0.5,
                                       atol=0.02)


TRANSFORMS = {
    "StickBreakingTransform": ("T.StickBreakingTransform()", (2, 3)),
    "SoftmaxTransform": ("T.SoftmaxTransform()", (2, 3)),
    "ReshapeTransform": ("T.ReshapeTransform((3,), (3, 1))", (2, 3)),
    "IndependentTransform": ("T.IndependentTransform(T.ExpTransform(), 1)", (2, 3)),
    "LowerCholeskyTransform": ("T.LowerCholeskyTransform()", (2, 3, 3)),
    "PositiveDefiniteTransform": ("T.PositiveDefiniteTransform()", (2, 3, 3)),
    "CorrCholeskyTransform": ("T.CorrCholeskyTransform()", (2, 6)),
    "CatTransform": ("T.CatTransform([T.ExpTransform(), T.identity_transform, "
                     "T.SigmoidTransform()], 1, [1, 1, 1])", (2, 3)),
    "StackTransform": ("T.StackTransform([T.ExpTransform(), T.TanhTransform(), "
                       "T.SigmoidTransform()], 1)", (2, 3)),
    "CumulativeDistributionTransform": (
        "T.CumulativeDistributionTransform(lib.distributions.Normal("
        "lib.tensor(0.5, dtype=lib.float64), lib.tensor(2.0, dtype=lib.float64)))", (2, 3)),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_a_structured_transform_is_pytorchs(name) -> None:
    source, shape = TRANSFORMS[name]
    x = RNG.standard_normal(shape)
    results = []
    for lib in (torch, lm):
        t = eval(source, {"T": lib.distributions.transforms, "lib": lib})  # noqa: S307
        xs = lib.tensor(x, requires_grad=True)
        y = t(xs)
        jacobian = None if not t.bijective else t.log_abs_det_jacobian(xs, y)
        loss = (y * lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum()
        (loss + (0 if jacobian is None else jacobian.sum())).backward()
        results.append([y.detach().numpy(), t.inv(y.detach()).numpy(), xs.grad.numpy(),
                        None if jacobian is None else jacobian.detach().numpy(),
                        tuple(t.forward_shape(shape)), t.bijective])
    for ours, theirs in zip(results[1], results[0]):
        if isinstance(theirs, np.ndarray):
            np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
        else:
            assert ours == theirs


CONSTRAINTS = ["real", "positive", "greater_than(2.0)", "less_than(1.0)", "interval(-1.0, 3.0)",
               "unit_interval", "simplex", "real_vector", "corr_cholesky",
               "independent(positive, 2)", "stack([positive, unit_interval], 1)",
               "cat([real, greater_than(1.0)], 1, [1, 2])"]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("source", CONSTRAINTS + ["lower_cholesky", "positive_definite"])
def test_the_registries_map_the_reals_onto_a_constraint_as_pytorchs(registry, source):
    shapes = {"simplex": (2, 3), "corr_cholesky": (2, 3), "lower_cholesky": (2, 3, 3),
              "positive_definite": (2, 3, 3), "stack([positive, unit_interval], 1)": (3, 2),
              "cat([real, greater_than(1.0)], 1, [1, 2])": (2, 3)}
    x = RNG.standard_normal(shapes.get(source, (2, 3, 2)))
    out = []
    for lib in (torch, lm):
        constraint = eval(source, {}, vars(lib.distributions.constraints))  # noqa: S307
        try:
            t = getattr(lib.distributions, registry)(constraint)
        except NotImplementedError:
            out.append(None)
            continue
        y = t(lib.tensor(x))
        assert constraint.check(y).numpy().all()
        out.append((y.numpy(), type(t).__name__))
    assert (out[0] is None) == (out[1] is None), source
    if out[0] is not None:
        np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-9, atol=1e-12)
        assert out[1][1] == out[0][1]


@pytest.mark.parametrize("source", ["lower_triangular", "lower_cholesky", "corr_cholesky",
                                    "square", "symmetric", "positive_semidefinite",
                                    "positive_definite", "multinomial(3)", "dependent"])
def test_a_matrix_constraint_checks_and_prints_as_pytorchs(source) -> None:
    a = RNG.standard_normal((3, 4, 4))
    spd = a @ a.transpose(0, 2, 1) + np.eye(4)
    factor = np.linalg.cholesky(spd)
    values = [a, spd, factor, factor / np.linalg.norm(factor, axis=-1, keepdims=True), -spd,
              np.zeros((2, 3, 3)), RNG.standard_normal((2, 3, 4)),
              np.array([[1.0, 0, 2], [3, 1, 1]])]
    ours = eval(source, {}, vars(D.constraints))  # noqa: S307
    theirs = eval(source, {}, vars(TD.constraints))  # noqa: S307
    assert repr(ours) == repr(theirs)
    if source == "dependent":
        for c in (ours, theirs):
            with pytest.raises(ValueError, match="dependent"):
                c.check(lm.ones(1) if c is ours else torch.ones(1))
        assert D.constraints.is_dependent(ours) and not D.constraints.is_dependent(D.constraints.real)
        return
    assert (ours.event_dim, ours.is_discrete) == (theirs.event_dim, theirs.is_discrete)
    for v in values:
        if v.ndim < ours.event_dim:
            continue
        np.testing.assert_array_equal(ours.check(lm.tensor(v)).numpy(),
                                      theirs.check(torch.tensor(v)).numpy())


def test_every_law_has_pytorchs_support_and_arg_constraints() -> None:
    for name in D.__all__:
        law = getattr(D, name)
        if not (isinstance(law, type) and issubclass(law, D.Distribution)) or law in (
                D.Distribution, D.ExponentialFamily):
            continue
        if not hasattr(TD, name):
            continue  # LogitRelaxedBernoulli, ExpRelaxedCategorical: checked beside their laws
        theirs = getattr(TD, name)
        assert repr(law.support) == repr(theirs.support), name
        if not isinstance(theirs.arg_constraints, property):
            assert {k: repr(v) for k, v in law.arg_constraints.items()} == {
                k: repr(v) for k, v in theirs.arg_constraints.items()}, name
    law = D.Uniform(lm.tensor([0.0, 1.0]), lm.tensor([2.0, 1.5]))
    assert law.support.check(lm.tensor([1.0, 1.7])).tolist() == [True, False]
    assert D.Binomial(lm.tensor(4.0), probs=lm.tensor(0.5)).support.check(
        lm.tensor([4.0, 5.0])).tolist() == [True, False]


def test_exponential_family_entropy_is_the_bregman_divergence() -> None:
    class Exponential(D.ExponentialFamily):
        def __init__(self, rate):
            self.rate = rate
            super().__init__(tuple(rate.shape))

        _natural_params = property(lambda self: (-self.rate,))
        _mean_carrier_measure = 0

        def _log_normalizer(self, x):
            return -(-x).log()

    rate = lm.tensor([0.5, 2.0, 3.0])
    np.testing.assert_allclose(Exponential(rate).entropy().detach().numpy(),
                               D.Exponential(rate).entropy().numpy(), rtol=1e-6)


def test_pytorchs_module_paths_import() -> None:
    for path in ("categorical", "multivariate_normal", "one_hot_categorical", "bernoulli",
                 "transformed_distribution", "relaxed_bernoulli", "utils", "exp_family",
                 "constraint_registry", "kl", "normal", "uniform", "studentT"):
        ours = importlib.import_module(f"lamina.distributions.{path}")
        theirs = importlib.import_module(f"torch.distributions.{path}")
        for name in theirs.__all__:
            assert hasattr(ours, name), f"lamina.distributions.{path}.{name}"
    from lamina.distributions.categorical import Categorical
    assert Categorical is D.Categorical


def test_the_utils_are_pytorchs() -> None:
    from torch.distributions import utils as theirs

    from lamina.distributions import utils as ours
    v = RNG.standard_normal(6)
    np.testing.assert_allclose(ours.vec_to_tril_matrix(lm.tensor(v)).numpy(),
                               theirs.vec_to_tril_matrix(torch.tensor(v)).numpy())
    np.testing.assert_allclose(ours.vec_to_tril_matrix(lm.tensor(v[:3]), -1).numpy(),
                               theirs.vec_to_tril_matrix(torch.tensor(v[:3]), -1).numpy())
    m = RNG.standard_normal((2, 4, 4))
    for diag in (0, -1, 1):
        np.testing.assert_allclose(ours.tril_matrix_to_vec(lm.tensor(m), diag).numpy(),
                                   theirs.tril_matrix_to_vec(torch.tensor(m), diag).numpy())
    p = np.array([0.0, 0.3, 1.0])
    for binary in (True, False):
        np.testing.assert_allclose(ours.probs_to_logits(lm.tensor(p), binary).numpy(),
                                   theirs.probs_to_logits(torch.tensor(p), binary).numpy())
        np.testing.assert_allclose(ours.logits_to_probs(lm.tensor(p), binary).numpy(),
                                   theirs.logits_to_probs(torch.tensor(p), binary).numpy())
    shapes = [tuple(t.shape) for t in ours.broadcast_all(lm.zeros(2, 1), 1.0, lm.ones(3))]
    assert shapes == [(2, 3)] * 3


def _spd(rng, batch=(2,), n=3):
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + np.eye(n)


@pytest.mark.parametrize("by", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_is_pytorchs(by) -> None:
    scale, value = _spd(RNG), _spd(RNG)
    given = np.linalg.cholesky(scale) if by == "scale_tril" else scale
    results = []
    for lib in (torch, lm):
        df = lib.tensor([4.5, 6.0], requires_grad=True)
        matrix = lib.tensor(given, requires_grad=True)
        law = lib.distributions.Wishart(df, **{by: matrix})
        log_prob, entropy = law.log_prob(lib.tensor(value)), law.entropy()
        (log_prob.sum() + entropy.sum()).backward()
        results.append([t.detach().numpy() for t in (log_prob, entropy, law.mean, law.mode,
                                                      law.variance, df.grad, matrix.grad)])
    for ours, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_wishart_draws_have_its_mean_and_differentiate() -> None:
    lm.manual_seed(0)
    scale = lm.tensor(_spd(RNG, ()), requires_grad=True)
    law = D.Wishart(lm.tensor(5.0), covariance_matrix=scale)
    draws = law.rsample((20000,))
    assert D.constraints.positive_definite.check(draws[:100]).numpy().all()
    np.testing.assert_allclose(draws.mean(0).detach().numpy(), 5 * scale.detach().numpy(),
                               rtol=0.03, atol=0.05)
    draws.sum().backward()
    assert np.isfinite(scale.grad.numpy()).all() and np.abs(scale.grad.numpy()).sum() > 0
    with pytest.raises(ValueError, match="greater than ndim - 1"):
        D.Wishart(lm.tensor(1.5), covariance_matrix=lm.eye(3))


@pytest.mark.parametrize("concentration", [0.5, 1.0, 3.0])
def test_lkj_cholesky_is_pytorchs(concentration) -> None:
    cov = _spd(RNG)
    sd = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))
    value = np.linalg.cholesky(cov / (sd[..., :, None] * sd[..., None, :]))
    results = []
    for lib in (torch, lm):
        c = lib.tensor([concentration, concentration + 1.0], dtype=lib.float64,
                       requires_grad=True)
        log_prob = lib.distributions.LKJCholesky(3, c).log_prob(lib.tensor(value))
        log_prob.sum().backward()
        results.append((log_prob.detach().numpy(), c.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-10)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-10)


def test_lkj_cholesky_draws_are_correlation_factors_of_pytorchs_law() -> None:
    lm.manual_seed(0)
    torch.manual_seed(0)
    ours = D.LKJCholesky(3, 2.0).sample((20000,))
    theirs = TD.LKJCholesky(3, 2.0).sample((20000,))
    assert D.constraints.corr_cholesky.check(ours).numpy().all()
    # the correlations' second moments, E[C_ij^2] = 1 / (2 eta + d - 1) off the diagonal
    second = ((ours @ ours.mT) ** 2).mean(0).numpy()
    np.testing.assert_allclose(second, ((theirs @ theirs.mT) ** 2).mean(0).numpy(), atol=0.01)
    np.testing.assert_allclose(second[0, 1], 1 / 6, atol=0.01)
