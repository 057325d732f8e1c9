"""`lamina.distributions`, as `torch.distributions`: the distributions training scripts
draw from and score with (a policy's `Categorical`, a VAE's `Normal`, a `Bernoulli`
decoder), with PyTorch's constructors, properties and methods, and `kl_divergence`
between two of one kind.

    >>> from lamina.distributions import Categorical
    >>> d = Categorical(logits=lm.zeros(4))
    >>> d.log_prob(lm.tensor(2)).exp()
    tensor(0.2500)

Draws come from lamina's generator (NumPy's PCG64), so they follow the same laws as
PyTorch's, not the same numbers. `rsample` is differentiable where PyTorch's is
(`Normal`, the gamma family by implicit reparameterisation, the relaxed laws);
log-probabilities, entropies and divergences differentiate like any op.
"""

from lamina.distributions import constraints, kl_more, transforms  # noqa: F401 (kl_more registers its rules)
from lamina.distributions.circular import LowRankMultivariateNormal, VonMises
from lamina.distributions.continuous import (
    Cauchy,
    Exponential,
    Gumbel,
    HalfNormal,
    Laplace,
    LogNormal,
)
from lamina.distributions.counts import Binomial, Geometric, Multinomial
from lamina.distributions.derived import HalfCauchy, InverseGamma, Kumaraswamy, Pareto, Weibull
from lamina.distributions.discrete import Bernoulli, Categorical
from lamina.distributions.distribution import Distribution
from lamina.distributions.gamma_family import Beta, Chi2, Dirichlet, Gamma, Poisson
from lamina.distributions.kl import kl_divergence, register_kl
from lamina.distributions.mixtures import MixtureSameFamily, StudentT
from lamina.distributions.multivariate import Independent, MultivariateNormal, OneHotCategorical
from lamina.distributions.normal import Normal, Uniform
from lamina.distributions.relaxed import (
    NegativeBinomial,
    OneHotCategoricalStraightThrough,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from lamina.distributions.transformed import TransformedDistribution, biject_to, transform_to
from lamina.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    ComposeTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
    Transform,
)

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical",
           "Cauchy", "Chi2", "ComposeTransform", "Dirichlet", "Distribution", "ExpTransform",
           "Exponential", "Gamma", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal",
           "Independent", "InverseGamma", "Kumaraswamy", "Laplace", "LogNormal",
           "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
           "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
           "Pareto", "Poisson", "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "SigmoidTransform", "SoftplusTransform", "StudentT", "TanhTransform", "Transform",
           "TransformedDistribution", "Uniform", "VonMises", "Weibull", "biject_to",
           "constraints", "kl_divergence", "register_kl", "transform_to", "transforms"]
