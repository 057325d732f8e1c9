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

import sys

from lamina.distributions import (  # noqa: F401 (kl_more registers its rules)
    constraints,
    kl_more,
    module_paths,
    transforms,
)
from lamina.distributions.circular import LowRankMultivariateNormal, VonMises
from lamina.distributions.constraint_registry import ConstraintRegistry, biject_to, transform_to
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
from lamina.distributions.exp_family import ExponentialFamily
from lamina.distributions.gamma_family import Beta, Chi2, Dirichlet, Gamma, Poisson
from lamina.distributions.kl import kl_divergence, register_kl
from lamina.distributions.matrix_laws import LKJCholesky, Wishart
from lamina.distributions.mixtures import MixtureSameFamily, StudentT
from lamina.distributions.multivariate import Independent, MultivariateNormal, OneHotCategorical
from lamina.distributions.normal import Normal, Uniform
from lamina.distributions.relaxed import (
    ExpRelaxedCategorical,
    LogitRelaxedBernoulli,
    NegativeBinomial,
    OneHotCategoricalStraightThrough,
    RelaxedBernoulli,
    RelaxedOneHotCategorical,
)
from lamina.distributions.tails import FisherSnedecor, GeneralizedPareto
from lamina.distributions.transformed import TransformedDistribution
from lamina.distributions.transforms import (
    AbsTransform,
    AffineTransform,
    CatTransform,
    ComposeTransform,
    CorrCholeskyTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    IndependentTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    SoftplusTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
    identity_transform,
)
from lamina.distributions.unit_laws import ContinuousBernoulli, LogisticNormal

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
           "Categorical", "Cauchy", "Chi2", "ComposeTransform", "ConstraintRegistry",
           "ContinuousBernoulli", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "Dirichlet", "Distribution", "ExpRelaxedCategorical", "ExpTransform", "Exponential",
           "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto", "Geometric",
           "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "IndependentTransform",
           "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
           "LogitRelaxedBernoulli", "LowRankMultivariateNormal", "LowerCholeskyTransform",
           "MixtureSameFamily", "Multinomial", "MultivariateNormal", "NegativeBinomial",
           "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto",
           "Poisson", "PositiveDefiniteTransform", "PowerTransform", "RelaxedBernoulli",
           "RelaxedOneHotCategorical", "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform",
           "StudentT", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
           "VonMises", "Weibull", "Wishart", "biject_to", "constraints", "identity_transform",
           "kl_divergence", "register_kl", "transform_to", "transforms"]

# PyTorch's module paths (torch.distributions.categorical, ...), made from the names above.
module_paths.register(sys.modules[__name__])
