"""PyTorch's `ConstraintRegistry` and its two registries: `biject_to(c)`, a bijection from
the reals onto the constraint's set (for an unconstrained parametrisation with an exact
log-Jacobian), and `transform_to(c)`, any map onto it (not always bijective: the softmax
onto the simplex). Users register their own constraints' transforms on them.

    >>> from lamina.distributions import biject_to, constraints
    >>> biject_to(constraints.simplex)(lm.zeros(2))
    tensor([0.3333, 0.3333, 0.3333])
"""

from __future__ import annotations

from typing import Any

from lamina.distributions import constraints as c
from lamina.distributions import transforms as t

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Transforms by constraint class: `register(constraint, factory)`, where factory
    makes the transform from a constraint of that class; calling the registry looks one up.

    Examples:
        >>> from lamina.distributions.constraint_registry import ConstraintRegistry
        >>> registry = ConstraintRegistry()
        >>> _ = registry.register(lm.distributions.constraints.positive,
        ...                       lambda constraint: lm.distributions.ExpTransform())
        >>> registry(lm.distributions.constraints.positive)
        ExpTransform()
    """

    def __init__(self) -> None:
        self._registry: dict[type, Any] = {}

    def register(self, constraint: Any, factory: Any = None) -> Any:
        """Register `factory` for constraint's class (given an instance, its class); as a
        decorator when `factory` is omitted."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, c.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, c.Constraint)):
            raise TypeError(f"register: expected a Constraint subclass or instance; got "
                            f"{constraint!r}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: Any) -> Any:
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} "
                                      "constraints (biject_to / transform_to have none "
                                      "registered; register one)") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint: Any, factory: Any) -> None:
    biject_to.register(constraint, factory)
    transform_to.register(constraint, factory)


def _interval(constraint: Any) -> Any:
    lo, hi = constraint.lower_bound, constraint.upper_bound
    if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and (lo, hi) == (0, 1):
        return t.SigmoidTransform()
    return t.ComposeTransform([t.SigmoidTransform(), t.AffineTransform(lo, hi - lo)])


_both(c.real, lambda _: t.identity_transform)
for bound in (c.greater_than, c.greater_than_eq):
    _both(bound, lambda k: t.ComposeTransform([t.ExpTransform(),
                                               t.AffineTransform(k.lower_bound, 1)]))
_both(c.less_than, lambda k: t.ComposeTransform([t.ExpTransform(),
                                                 t.AffineTransform(k.upper_bound, -1)]))
for interval in (c.interval, c.half_open_interval):
    _both(interval, _interval)
_both(c.corr_cholesky, lambda _: t.CorrCholeskyTransform())
biject_to.register(c.independent, lambda k: t.IndependentTransform(
    biject_to(k.base_constraint), k.reinterpreted_batch_ndims))
transform_to.register(c.independent, lambda k: t.IndependentTransform(
    transform_to(k.base_constraint), k.reinterpreted_batch_ndims))
biject_to.register(c.simplex, lambda _: t.StickBreakingTransform())
transform_to.register(c.simplex, lambda _: t.SoftmaxTransform())
transform_to.register(c.lower_cholesky, lambda _: t.LowerCholeskyTransform())
transform_to.register(c.positive_definite, lambda _: t.PositiveDefiniteTransform())
transform_to.register(c.positive_semidefinite, lambda _: t.PositiveDefiniteTransform())
for registry in (biject_to, transform_to):
    registry.register(c.cat, lambda k, r=registry: t.CatTransform(
        [r(x) for x in k.cseq], k.dim, k.lengths))
    registry.register(c.stack, lambda k, r=registry: t.StackTransform(
        [r(x) for x in k.cseq], k.dim))
