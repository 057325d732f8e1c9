"""PyTorch's module paths under torch.distributions, for the imports scripts write
(`from torch.distributions.categorical import Categorical`): each path a small module
holding the names PyTorch's module of that name exports, made from lamina.distributions'
own when that package loads. lamina keeps its laws grouped by family instead (normal.py,
gamma_family.py, ...); the paths that are lamina's files too (normal, kl, constraints,
constraint_registry, exp_family, transforms, distribution, utils) are those files."""

from __future__ import annotations

import sys
import types
from typing import Any

PATHS = {
    "bernoulli": ["Bernoulli"], "beta": ["Beta"], "binomial": ["Binomial"],
    "categorical": ["Categorical"], "cauchy": ["Cauchy"], "chi2": ["Chi2"],
    "continuous_bernoulli": ["ContinuousBernoulli"], "dirichlet": ["Dirichlet"],
    "exponential": ["Exponential"],
    "fishersnedecor": ["FisherSnedecor"], "gamma": ["Gamma"],
    "generalized_pareto": ["GeneralizedPareto"], "geometric": ["Geometric"],
    "gumbel": ["Gumbel"], "half_cauchy": ["HalfCauchy"], "half_normal": ["HalfNormal"],
    "independent": ["Independent"], "inverse_gamma": ["InverseGamma"],
    "kumaraswamy": ["Kumaraswamy"], "laplace": ["Laplace"], "lkj_cholesky": ["LKJCholesky"],
    "log_normal": ["LogNormal"],
    "logistic_normal": ["LogisticNormal"],
    "lowrank_multivariate_normal": ["LowRankMultivariateNormal"],
    "mixture_same_family": ["MixtureSameFamily"], "multinomial": ["Multinomial"],
    "multivariate_normal": ["MultivariateNormal"], "negative_binomial": ["NegativeBinomial"],
    "one_hot_categorical": ["OneHotCategorical", "OneHotCategoricalStraightThrough"],
    "pareto": ["Pareto"], "poisson": ["Poisson"],
    "relaxed_bernoulli": ["LogitRelaxedBernoulli", "RelaxedBernoulli"],
    "relaxed_categorical": ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"],
    "studentT": ["StudentT"], "transformed_distribution": ["TransformedDistribution"],
    "uniform": ["Uniform"], "von_mises": ["VonMises"], "weibull": ["Weibull"],
    "wishart": ["Wishart"],
}


def register(package: Any) -> None:
    """Make each path importable (`import lamina.distributions.beta`) and an attribute."""
    for name, names in PATHS.items():
        full = f"{package.__name__}.{name}"
        module = sys.modules.get(full)
        if module is None:
            module = types.ModuleType(full, f"PyTorch's torch.distributions.{name}: "
                                            f"{', '.join(names)} (lamina.distributions').")
            module.__all__ = list(names)
            for n in names:
                setattr(module, n, getattr(package, n))
            sys.modules[full] = module
        setattr(package, name, module)
