"""KL(p || q) for the distributions of continuous.py, gamma_family.py and
multivariate.py, each pair of one kind, by PyTorch's closed forms."""

from __future__ import annotations

from lamina.autograd.tensor import Tensor
from lamina.distributions.continuous import Exponential, Laplace
from lamina.distributions.gamma_family import Beta, Dirichlet, Gamma, Poisson
from lamina.distributions.kl import kl_divergence, register_kl
from lamina.distributions.multivariate import Independent, MultivariateNormal, OneHotCategorical


@register_kl(Exponential, Exponential)
def _exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(Laplace, Laplace)
def _laplace(p: Laplace, q: Laplace) -> Tensor:
    ratio, gap = p.scale / q.scale, (p.loc - q.loc).abs()
    return -ratio.log() + gap / q.scale + ratio * (-gap / p.scale).exp() - 1


@register_kl(Gamma, Gamma)
def _gamma(p: Gamma, q: Gamma) -> Tensor:
    pa, pb, qa, qb = p.concentration, p.rate, q.concentration, q.rate
    return (qa * (pb / qb).log() + qa.lgamma() - pa.lgamma() + (pa - qa) * pa.digamma()
            + (qb - pb) * (pa / pb))


@register_kl(Beta, Beta)
def _beta(p: Beta, q: Beta) -> Tensor:
    sp = p.concentration1 + p.concentration0
    sq = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sp.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sq.lgamma()
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    return t1 - t2 + t3 + t4 + (sq - sp) * sp.digamma()


@register_kl(Dirichlet, Dirichlet)
def _dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    sp, sq = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = sp.lgamma() - sq.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sp.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Poisson, Poisson)
def _poisson(p: Poisson, q: Poisson) -> Tensor:
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(MultivariateNormal, MultivariateNormal)
def _mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    import lamina.linalg as linalg

    if p.event_shape != q.event_shape:
        raise ValueError("kl_divergence: the two MultivariateNormals have different event "
                         f"shapes {tuple(p.event_shape)} and {tuple(q.event_shape)}")
    n = p.event_shape[0]
    qL, pL = q.scale_tril, p.scale_tril
    half_log_dets = q._half_log_det() - p._half_log_det()
    term2 = linalg.solve_triangular(qL, pL, upper=False).pow(2).sum((-2, -1))
    diff = (q.loc - p.loc).unsqueeze(-1)
    term3 = linalg.solve_triangular(qL, diff, upper=False).pow(2).sum((-2, -1))
    return half_log_dets + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError("kl_divergence: Independent distributions with different "
                                  "reinterpreted_batch_ndims")
    return p._summed(kl_divergence(p.base_dist, q.base_dist))


@register_kl(OneHotCategorical, OneHotCategorical)
def _one_hot(p: OneHotCategorical, q: OneHotCategorical) -> Tensor:
    return kl_divergence(p._categorical, q._categorical)
