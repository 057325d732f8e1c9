"""`distributions.constraints`, PyTorch's: the sets a distribution's parameters and values
live in. `check(value)` answers elementwise (over the event for constraints on vectors);
`biject_to`/`transform_to` map the reals onto each one.

    >>> from lamina.distributions import constraints
    >>> constraints.positive.check(lm.tensor([1.0, -1.0]))
    tensor([ True, False])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lamina.autograd.tensor import Tensor
from lamina.creation import as_tensor

__all__ = ["Constraint", "MixtureSameFamilyConstraint", "boolean", "cat", "corr_cholesky",
           "dependent", "dependent_property", "greater_than", "greater_than_eq",
           "half_open_interval", "independent", "integer_interval", "interval", "is_dependent",
           "less_than", "lower_cholesky", "lower_triangular", "multinomial", "nonnegative",
           "nonnegative_integer", "one_hot", "positive", "positive_definite",
           "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex",
           "square", "stack", "symmetric", "unit_interval"]


class Constraint:
    """A set of values: `check(value)` is a bool tensor, one entry per event.

    Examples:
        >>> lm.distributions.constraints.interval(0.0, 2.0).check(lm.tensor([1.0, 3.0]))
        tensor([ True, False])
    """

    is_discrete = False
    event_dim = 0

    def check(self, value: Any) -> Tensor:
        v = value.detach().numpy() if isinstance(value, Tensor) else np.asarray(value)
        ok = np.asarray(self._holds(v), bool)
        for _ in range(self.event_dim):
            ok = ok.all(-1)
        return as_tensor(ok)

    def _holds(self, v: np.ndarray) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__[1:]}({args})"


def _bound(b: Any) -> Any:
    return b.detach().numpy() if isinstance(b, Tensor) else b


class _Real(Constraint):
    def _holds(self, v: np.ndarray) -> Any:
        return v == v  # not NaN


class _Boolean(Constraint):
    is_discrete = True

    def _holds(self, v: np.ndarray) -> Any:
        return (v == 0) | (v == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound: Any) -> None:
        self.lower_bound = lower_bound

    def _holds(self, v: np.ndarray) -> Any:
        return v > _bound(self.lower_bound)


class _GreaterThanEq(_GreaterThan):
    def _holds(self, v: np.ndarray) -> Any:
        return v >= _bound(self.lower_bound)


class _LessThan(Constraint):
    def __init__(self, upper_bound: Any) -> None:
        self.upper_bound = upper_bound

    def _holds(self, v: np.ndarray) -> Any:
        return v < _bound(self.upper_bound)


class _Interval(Constraint):
    def __init__(self, lower_bound: Any, upper_bound: Any) -> None:
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def _holds(self, v: np.ndarray) -> Any:
        return (_bound(self.lower_bound) <= v) & (v <= _bound(self.upper_bound))


class _HalfOpenInterval(_Interval):
    def _holds(self, v: np.ndarray) -> Any:
        return (_bound(self.lower_bound) <= v) & (v < _bound(self.upper_bound))


class _IntegerInterval(_Interval):
    is_discrete = True

    def _holds(self, v: np.ndarray) -> Any:
        return (v % 1 == 0) & super()._holds(v)


class _IntegerGreaterThan(_GreaterThanEq):
    is_discrete = True

    def _holds(self, v: np.ndarray) -> Any:
        return (v % 1 == 0) & super()._holds(v)


class _Simplex(Constraint):
    event_dim = 1

    def _holds(self, v: np.ndarray) -> Any:
        ok = np.all(v >= 0, -1) & (np.abs(v.sum(-1) - 1) < 1e-6)
        return ok[..., None]


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def _holds(self, v: np.ndarray) -> Any:
        return (((v == 0) | (v == 1)).all(-1) & (v.sum(-1) == 1))[..., None]


class _Independent(Constraint):
    def __init__(self, base_constraint: Constraint, reinterpreted_batch_ndims: int) -> None:
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete

    def __repr__(self) -> str:
        return f"IndependentConstraint({self.base_constraint}, {self.reinterpreted_batch_ndims})"

    def check(self, value: Any) -> Tensor:
        ok = self.base_constraint.check(value).numpy()
        for _ in range(self.reinterpreted_batch_ndims):
            ok = ok.all(-1)
        return as_tensor(ok)


real = _Real()
real_vector = _Independent(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
half_open_interval = _HalfOpenInterval
integer_interval = _IntegerInterval
independent = _Independent

# The matrix, piecewise and dependent constraints (they subclass Constraint, above).
from lamina.distributions.constraints_more import (  # noqa: E402
    MixtureSameFamilyConstraint,
    cat,
    corr_cholesky,
    dependent,
    dependent_property,
    is_dependent,
    lower_cholesky,
    lower_triangular,
    multinomial,
    positive_definite,
    positive_semidefinite,
    square,
    stack,
    symmetric,
)
