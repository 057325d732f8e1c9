"""distributions.transforms, constraints, TransformedDistribution and biject_to against
PyTorch's: the same maps, inverses, log-Jacobians, log-probabilities and CDFs, with the
same float64 gradients; the same constraint checks and reprs."""

from __future__ import annotations

import numpy as np
import pytest

import lamina as lm

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3))
POS = RNG.uniform(0.5, 2.0, (2, 3))
LOC, SCALE = RNG.standard_normal(3), RNG.uniform(0.5, 2.0, 3)

# name, builder(lib, *params), params, input x (in the transform's domain)
TRANSFORMS = [
    ("exp", lambda lib: lib.distributions.transforms.ExpTransform(), (), X),
    ("sigmoid", lambda lib: lib.distributions.transforms.SigmoidTransform(), (), X),
    ("tanh", lambda lib: lib.distributions.transforms.TanhTransform(), (), X),
    ("softplus", lambda lib: lib.distributions.transforms.SoftplusTransform(), (), X),
    ("affine", lambda lib, a, b: lib.distributions.transforms.AffineTransform(a, b),
     (LOC, SCALE), X),
    ("affine_scalar", lambda lib: lib.distributions.transforms.AffineTransform(0.5, -2.0),
     (), X),
    ("affine_event", lambda lib, a, b: lib.distributions.transforms.AffineTransform(
        a, b, event_dim=1), (LOC, SCALE), X),
    ("power", lambda lib: lib.distributions.transforms.PowerTransform(2.5), (), POS),
    ("compose", lambda lib, a, b: lib.distributions.transforms.ComposeTransform(
        [lib.distributions.transforms.ExpTransform(),
         lib.distributions.transforms.AffineTransform(a, b)]), (LOC, SCALE), X),
    ("inverse", lambda lib: lib.distributions.transforms.ExpTransform().inv, (), POS),
]


def _both(build, params, x):
    made = []
    for lib in (torch, lm):
        ps = [lib.tensor(p, requires_grad=True) for p in params]
        xs = lib.tensor(x, requires_grad=True)
        made.append((build(lib, *ps), ps, xs))
    return made


def _close(a, b, what):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                               atol=1e-12, err_msg=what)


@pytest.mark.parametrize("name, build, params, x", TRANSFORMS, ids=[t[0] for t in TRANSFORMS])
def test_a_transform_maps_inverts_and_scales_as_pytorchs(name, build, params, x):
    (tt, tp, tx), (lt, lp, lx) = _both(build, params, x)
    ty, ly = tt(tx), lt(lx)
    _close(ly, ty, "forward")
    _close(lt.inv(ly.detach()), tt.inv(ty.detach()), "inverse")
    tj, lj = tt.log_abs_det_jacobian(tx, ty), lt.log_abs_det_jacobian(lx, ly)
    assert tuple(lj.shape) == tuple(tj.shape)
    _close(lj, tj, "log_abs_det_jacobian")
    assert lj.requires_grad == tj.requires_grad
    if tj.requires_grad:
        w = RNG.standard_normal(tuple(tj.shape))
        (tj * torch.tensor(w)).sum().backward()
        (lj * lm.tensor(w)).sum().backward()
        for a, b in zip([lx, *lp], [tx, *tp]):  # None where the Jacobian ignores it
            assert (a.grad is None) == (b.grad is None)
            if b.grad is not None:
                _close(a.grad, b.grad, "gradient")
    assert lt.event_dim == tt.event_dim and repr(lt).split("(")[0] == repr(tt).split("(")[0]


def test_a_cached_tanh_gives_its_input_back_where_atanh_cannot():
    for lib in (torch, lm):
        t = lib.distributions.transforms.TanhTransform(cache_size=1)
        x = lib.tensor([30.0], dtype=lib.float64)
        y = t(x)
        assert float(y) == 1.0 and t.inv(y) is x
        with np.errstate(divide="ignore"):  # NumPy's warning on atanh(1), not the point here
            assert np.isinf(lib.distributions.transforms.TanhTransform().inv(y).numpy()).all()


# name, builder(D, *params), params, value
DISTRIBUTIONS = [
    ("exp_normal", lambda D, a, b: D.TransformedDistribution(
        D.Normal(a, b), [D.transforms.ExpTransform()]), (LOC, SCALE), POS[0]),
    ("tanh_normal", lambda D, a, b: D.TransformedDistribution(
        D.Normal(a, b), D.transforms.TanhTransform()), (LOC, SCALE), np.tanh(X)),
    ("sigmoid_affine", lambda D, a, b: D.TransformedDistribution(
        D.Normal(a, b), [D.transforms.SigmoidTransform(),
                         D.transforms.AffineTransform(-1.0, 4.0)]), (LOC, SCALE),
     RNG.uniform(-0.9, 2.9, (2, 3))),
    ("event_affine", lambda D, a, b: D.TransformedDistribution(
        D.Independent(D.Normal(a, b), 1), [D.transforms.AffineTransform(a, b, event_dim=1)]),
     (LOC, SCALE), X),
    ("decreasing", lambda D, a, b: D.TransformedDistribution(
        D.Normal(a, b), [D.transforms.AffineTransform(0.0, -2.0)]), (LOC, SCALE), X),
]


@pytest.mark.parametrize("name, build, params, value", DISTRIBUTIONS,
                         ids=[d[0] for d in DISTRIBUTIONS])
def test_a_transformed_distribution_scores_as_pytorchs(name, build, params, value):
    results = []
    for lib in (torch, lm):
        ps = [lib.tensor(p, requires_grad=True) for p in params]
        d = build(lib.distributions, *ps)
        assert d.has_rsample
        out = {"log_prob": d.log_prob(lib.tensor(value))}
        if name in ("exp_normal", "decreasing"):
            out["cdf"] = d.cdf(lib.tensor(value))
            out["icdf"] = d.icdf(lib.tensor(np.full(value.shape, 0.3)))
        results.append((d, ps, out))
    (td, tps, tout), (ld, lps, lout) = results
    assert tuple(ld.batch_shape) == tuple(td.batch_shape)
    assert tuple(ld.event_shape) == tuple(td.event_shape)
    assert tuple(ld.sample((4,)).shape) == tuple(td.sample((4,)).shape)
    for what in tout:
        _close(lout[what], tout[what], what)
        tout[what].sum().backward()
        lout[what].sum().backward()
        for a, b in zip(lps, tps):
            _close(a.grad, b.grad, f"{what} gradient")
            a.grad, b.grad = None, None


def test_rsample_through_a_transform_carries_the_gradient():
    loc = lm.tensor(LOC, requires_grad=True)
    d = lm.distributions.TransformedDistribution(lm.distributions.Normal(loc, 1.0),
                                                 [lm.distributions.transforms.ExpTransform()])
    lm.manual_seed(0)
    draws = d.rsample((3000,))
    draws.mean().backward()
    # d E[exp(loc + z)] / d loc = E[exp(loc + z)] = exp(loc + 1/2), over 3 means
    np.testing.assert_allclose(loc.grad.numpy(), np.exp(LOC + 0.5) / 3, rtol=0.1)


CONSTRAINTS = ["real", "positive", "nonnegative", "unit_interval", "boolean", "simplex",
               "nonnegative_integer", "positive_integer", "real_vector", "interval(-1.0, 0.5)",
               "greater_than(0.2)", "less_than(0.1)", "half_open_interval(0.0, 1.0)",
               "integer_interval(0, 2)", "greater_than_eq(0.0)"]
VALUES = np.array([[0.0, 1.0, 0.5], [-1.0, 2.0, 0.25], [1.0, 0.0, 0.0], [0.3, 0.7, 0.0]])


@pytest.mark.parametrize("source", CONSTRAINTS)
def test_a_constraint_checks_and_prints_as_pytorchs(source):
    ours = eval(source, {}, vars(lm.distributions.constraints))  # noqa: S307
    theirs = eval(source, {}, vars(torch.distributions.constraints))  # noqa: S307
    assert repr(ours) == repr(theirs)
    assert ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete
    np.testing.assert_array_equal(ours.check(lm.tensor(VALUES)).numpy(),
                                  theirs.check(torch.tensor(VALUES)).numpy())


@pytest.mark.parametrize("source", ["real", "positive", "greater_than(2.0)", "less_than(1.0)",
                                    "interval(-1.0, 3.0)", "unit_interval"])
def test_biject_to_maps_the_reals_as_pytorchs(source):
    maps = [lib.distributions.biject_to(eval(source, {}, vars(  # noqa: S307
        lib.distributions.constraints))) for lib in (torch, lm)]
    ty, ly = maps[0](torch.tensor(X)), maps[1](lm.tensor(X))
    _close(ly, ty, "value")
    _close(maps[1].log_abs_det_jacobian(lm.tensor(X), ly),
           maps[0].log_abs_det_jacobian(torch.tensor(X), ty), "log_abs_det_jacobian")
    for lib in (torch, lm):  # no transform onto a discrete set
        with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
            lib.distributions.biject_to(lib.distributions.constraints.boolean)
